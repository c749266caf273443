package redissink

// The raw layout's key names, for tests that seed or check it.

func rawKeys(tmpl, crawl string) keys {
	k, err := newKeys(tmpl, crawl)
	if err != nil {
		panic(err)
	}
	return k
}

func SchemaKey(tmpl, crawl string) string { return rawKeys(tmpl, crawl).schema() }

func CurrentKey(tmpl, crawl, rule string) string { return rawKeys(tmpl, crawl).current(rule) }

func VersionsKey(tmpl, crawl, rule, key string) string {
	return rawKeys(tmpl, crawl).versions(rule, key)
}

func CountsKey(tmpl, crawl, rule string) string { return rawKeys(tmpl, crawl).counts(rule) }

// SetBeforeScript makes fn run between each Flush's read and its script.
func SetBeforeScript(s *Sink, fn func()) { s.beforeScript = fn }
