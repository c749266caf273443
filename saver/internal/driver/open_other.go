//go:build !unix

package driver

const openNonblock = 0
