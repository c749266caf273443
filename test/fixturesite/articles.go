package fixturesite

import (
	"bytes"
	"slices"
)

// ArticlesPath lists the articles (shop.go describes the shop sub-site).
const ArticlesPath = "/articles/"

// Article is an article page: its main text among boilerplate. A main-text
// extractor (`text: main`) must return the Title and Paragraphs and none of
// the Boilerplate.
type Article struct {
	Path       string
	Title      string
	Paragraphs []string
	// Boilerplate are phrases of the header, menu, sidebar and footer around
	// the article: none belongs in its main text.
	Boilerplate []string
}

// Articles returns the articles, in the order ArticlesPath lists them.
func Articles() []Article {
	out := make([]Article, len(articles))
	for i, a := range articles {
		a.Paragraphs, a.Boilerplate = slices.Clone(a.Paragraphs), slices.Clone(a.Boilerplate)
		out[i] = a
	}
	return out
}

// The boilerplate every article page has.
const (
	articleMasthead = "The Fixture Gazette, daily since 1999"
	articleMenu     = "Subscribe for unlimited access"
	articleSidebar  = "Most read this week"
	articleSideItem = "Ten tips for a tidy kitchen drawer"
	articleNewsltr  = "Sign up to our newsletter and never miss a story"
	articleFooter   = "Copyright 2026 Fixture Press. All rights reserved."
	articleCookies  = "We use cookies to improve your experience."
)

var articleBoilerplate = []string{articleMasthead, articleMenu, articleSidebar, articleSideItem,
	articleNewsltr, articleFooter, articleCookies}

var articles = []Article{
	{
		Path:  "/articles/1.html",
		Title: "How a small bakery learned to love its sourdough",
		Paragraphs: []string{
			"When the bakery on Mill Street opened its doors in 2019, its owners had never kept a sourdough starter alive for more than a week. Five years later, the same jar of flour and water feeds a whole neighbourhood every morning.",
			"The secret, they say, is patience rather than any particular recipe. The starter is fed twice a day, kept at a steady temperature, and never rushed, even when the queue outside reaches the corner of the street.",
			"Customers come for the bread but stay for the conversation. Regulars know the bakers by name and the bakers know which loaf each regular will ask for before the door has closed behind them.",
			"Not everything went well at first. A hot summer killed the starter twice, and a broken oven cost the bakery a week of sales. Each time the owners started again, a little wiser than before.",
			"Today the bakery sells around four hundred loaves a day and has trained six apprentices, two of whom have opened bakeries of their own in nearby towns.",
		},
	},
	{
		Path:  "/articles/2.html",
		Title: "Crème brûlée, café culture and the return of the corner shop",
		Paragraphs: []string{
			"Across the city, corner shops that closed a decade ago are opening again, this time selling crème brûlée, jalapeño salsa and smørrebrød alongside milk and newspapers.",
			"The new owners are often young families who grew tired of long commutes. They choose a street they know, take over an empty shop front and stock it with the food they themselves like to eat.",
			"Economists are cautious about calling it a trend. Rents remain high and margins thin, and many of the new shops depend on a café counter to pay the bills during quiet afternoons.",
			"Still, the residents of these streets welcome them. A shop that knows its customers, they argue, is worth a few cents more on the price of a loaf or a litre of milk.",
			"Whether the revival lasts will depend on the next few winters, when footfall drops and the café tables outside stand empty in the rain.",
		},
	},
}

func init() {
	for i := range articles {
		articles[i].Boilerplate = articleBoilerplate
	}
}

// articlePage renders a with its boilerplate.
func articlePage(a Article) []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>" + esc(a.Title) +
		" | The Fixture Gazette</title></head>\n<body>\n<header class=\"masthead\"><p>" + articleMasthead + "</p>\n" +
		`<nav class="menu"><ul><li><a href="/articles/">News</a></li><li><a href="/shop/">Shop</a></li>` +
		"<li><a href=\"/articles/\">" + articleMenu + "</a></li></ul></nav>\n</header>\n" +
		"<main>\n<article>\n<h1>" + esc(a.Title) + "</h1>\n<p class=\"byline\">By Ada Fixture</p>\n")
	for _, p := range a.Paragraphs {
		b.WriteString("<p>" + esc(p) + "</p>\n")
	}
	b.WriteString("</article>\n<aside class=\"sidebar\"><h2>" + articleSidebar + "</h2>\n<ul>")
	for _, o := range articles {
		b.WriteString(`<li><a href="` + o.Path + `">` + esc(o.Title) + "</a></li>")
	}
	b.WriteString("<li>" + articleSideItem + "</li></ul>\n<p>" + articleNewsltr + "</p>\n</aside>\n</main>\n" +
		"<footer><p>" + articleFooter + "</p>\n<p>" + articleCookies + "</p></footer>\n</body>\n</html>\n")
	return b.Bytes()
}

// articleIndex renders ArticlesPath.
func articleIndex() []byte {
	var b bytes.Buffer
	b.WriteString("<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Articles</title></head>\n<body>\n" +
		"<h1>Articles</h1>\n<ul>\n")
	for _, a := range articles {
		b.WriteString(`<li><a href="` + a.Path[len(ArticlesPath):] + `">` + esc(a.Title) + "</a></li>\n")
	}
	b.WriteString("</ul>\n</body>\n</html>\n")
	return b.Bytes()
}
