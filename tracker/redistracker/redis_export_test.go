package redistracker

// SmallFingerprintTable makes a new crawl start with 16 fingerprint buckets
// that split after 4 members each, so tests exercise bucket splits.
func SmallFingerprintTable(cfg *Config) { cfg.fpBase, cfg.fpLoad = 4, 4 }
