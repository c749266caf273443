// Package extmodule proves that distscrape can be used as a library: its
// test builds testdata/crawler, a program in a module of its own (its go.mod
// replaces distscrape by this repository), with its own Scraper and Saver,
// run by the manager on the memory tracker with the public fetch client,
// and checks that it crawls the fixture site completely. A type the program
// needs that lived in an internal/ package would stop it compiling.
package extmodule
