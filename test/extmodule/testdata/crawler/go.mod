module example.com/crawler

go 1.26.8

require github.com/distscrape/distscrape v0.0.0

// The test rewrites this to the repository's absolute path in its copy, and
// builds with -mod=mod so the requirements of distscrape are filled in.
replace github.com/distscrape/distscrape => ../../../..
