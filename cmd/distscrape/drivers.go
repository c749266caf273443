package main

// The drivers this program links: each registers its kind and its config
// section (package driver), so adding one is a line here.
import (
	_ "github.com/distscrape/distscrape/fetch/render/chromium"
	_ "github.com/distscrape/distscrape/record/csvsink"
	_ "github.com/distscrape/distscrape/record/jsonlsink"
	_ "github.com/distscrape/distscrape/record/mysqlsink"
	_ "github.com/distscrape/distscrape/record/parquetsink"
	_ "github.com/distscrape/distscrape/record/pgsink"
	_ "github.com/distscrape/distscrape/record/redissink"
	_ "github.com/distscrape/distscrape/record/sqlitesink"
	_ "github.com/distscrape/distscrape/saver/filesaver"
	_ "github.com/distscrape/distscrape/saver/redissaver"
	_ "github.com/distscrape/distscrape/saver/s3saver"
	_ "github.com/distscrape/distscrape/saver/tarsaver"
	_ "github.com/distscrape/distscrape/saver/warcsaver"
	_ "github.com/distscrape/distscrape/saver/webdavsaver"
	_ "github.com/distscrape/distscrape/tracker/memtracker"
	_ "github.com/distscrape/distscrape/tracker/redistracker"
)
