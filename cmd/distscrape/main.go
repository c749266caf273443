// Command distscrape is a distributed scraper and crawler.
package main

func main() {}
