// Package leaky is every way an exported declaration can leak an internal
// type; TestWalkerFindsEveryLeak expects each one found.
package leaky

import "github.com/distscrape/distscrape/internal/urlnorm"

type Field struct{ R *urlnorm.Resolver }

type Embedded struct{ *urlnorm.Resolver }

type Method struct{}

func (Method) M(o urlnorm.Options) {}

type hidden struct{ Q []urlnorm.Resolver }

func ViaUnexported() hidden { return hidden{} }

type Interface interface {
	M(map[string]func(*urlnorm.Resolver))
}

var Var chan urlnorm.Resolver

type Alias = urlnorm.Options

type Generic[T interface{ *urlnorm.Resolver }] struct{}

type promoter struct{}

func (promoter) M() urlnorm.Options { return urlnorm.Options{} }

type Promoted struct{ promoter }

// Clean must not be reported: internal types behind unexported fields and
// methods are not part of the API.
type Clean struct {
	r *urlnorm.Resolver
}

func (Clean) m() urlnorm.Options { return urlnorm.Options{} }
