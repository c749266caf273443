package filesaver_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/distscrape/distscrape/saver"
	"github.com/distscrape/distscrape/saver/filesaver"
)

// A mirror of a site: each page saved as host/path under a directory, made
// durable by Flush (the crawl manager flushes before it completes a batch).
func ExampleNew() {
	dir, _ := os.MkdirTemp("", "mirror")
	defer os.RemoveAll(dir)
	s, err := filesaver.New(filesaver.Config{Dir: dir, Layout: "mirror", Crawl: "example", Worker: "w1"})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, u := range []string{"https://example.org/", "https://example.org/docs/a.html?lang=en"} {
		p := &saver.Page{Key: u, URL: u, Status: 200, ContentType: "text/html", FetchedAt: time.Now(), Body: []byte("<html></html>")}
		if err := s.Save(ctx, p); err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(s.Path(p))
	}
	if err := s.Close(ctx); err != nil { // Close flushes
		fmt.Println(err)
	}
	// Output:
	// example.org/index.html
	// example.org/docs/a.html?lang=en
}
