package saver_test

import (
	"fmt"

	"github.com/distscrape/distscrape/saver"
)

// A bad template is rejected with the config field it came from.
func ExampleValidateTemplate() {
	fmt.Println(saver.ValidateTemplate("saver.key", "{crawl}:{url}"))
	// Output:
	// saver.key: unknown placeholder {url} (use {id}, {host}, {path}, {sha256}, {worker}, {crawl}) in "{crawl}:{url}"
}
