// Package extract takes data out of fetched pages: the config's `extract:`
// rules, each a table of typed fields found by CSS selector, XPath, JSON
// path, regex or the page's readable main text, turned into record.Sets for
// the record sinks. It also finds the links a crawl follows by selector
// (Follow).
//
// # Selectors
//
//   - css: a CSS selector (cascadia, the engine under goquery and Colly's
//     OnHTML). With attr, the attribute's value; else the element's text,
//     runs of white space collapsed to one space, script and style left
//     out. Inside `each`, a selector matches the element's descendants, and
//     the selector ":scope" is the element itself.
//   - xpath: an XPath 1.0 expression (antchfx/xpath over the same tree).
//     Element results give their text (or attr), attribute and text nodes
//     their value, and expressions such as count(...) their number. Inside
//     `each`, the element is the root: "." is the element, "@href" its
//     attribute, and "//a" its descendants.
//   - json: a jq expression (itchyny/gojq), on a JSON body. The body is
//     decoded once, numbers kept exactly (json.Number). A field's value is
//     its first output (an object or array gives its compact JSON); with
//     all, every output, and an output that is an array gives its elements.
//     A run-time error of the expression (".items[]" on a page without
//     items) is "not found", and the record's problem says why. Inside
//     `each`, the expression runs on each element. The environment ($ENV,
//     env) is empty: a rule cannot read the worker's secrets.
//   - regex: a Perl/.NET regex (dlclark/regexp2, as the scraper's regexes),
//     on the decoded body, or inside `each` on the element's HTML (or JSON
//     text). The value is the group named "value", else the first group
//     that took part in the match, else the whole match.
//   - text: main: the page's readable main text (go-readability), computed
//     once per page after every other field, even inside `each`.
//
// A rule's `match` is a regex in the same syntax, matched anywhere in the
// page's URL (anchor it with ^ and $); it is required ("." for every
// page), as in the crawl's other rules.
//
// # Values and types
//
// Every value found is trimmed of white space; a value that is then empty
// counts as not found. A field not found takes its default, else it is
// absent from Record.Fields (NULL in SQL), and a required field not found
// makes the record invalid. The types (see Convert for the exact rules):
// string; int and float, which accept currency symbols and codes ("$12",
// "12,50 €", "EUR 1.234,50") and thousands separators; bool from a fixed
// set of words; time from RFC 3339, HTTP dates, dates with English month
// names and Unix seconds; url, resolved against <base href> and the page's
// URL. A value that is not of its type makes the record invalid, and the
// problem names the field and the value.
//
// # Bounds
//
// A page costs at most Options.MaxBody bytes of body (larger is ErrBody),
// Options.MaxNodes elements (a page with more is ErrBody before its tree is
// built, and a selector yielding more values is ErrBody as well) and
// Options.Budget of time, which every regex, selector and jq expression
// draws on (running out is ErrBudget); the budget starts once the page is
// parsed. Parsing and the readability pass cannot be interrupted; MaxBody
// and MaxNodes bound them. Being time, the budget depends on the machine's
// load: a caller should retry a page that ran out of it rather than take
// it for lost (the crawl does).
package extract
