//go:build !unix

package storekit

const openNonblock = 0
