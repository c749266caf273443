// Package boundary keeps distscrape usable as a library. Its tests load the
// module's packages with golang.org/x/tools/go/packages and check what the
// compiler cannot check on its own:
//
//   - no exported signature of a public package mentions an internal/ type
//     (a user outside the module could not implement or call it);
//   - the import rules of docs/architecture.md (section "Import rules"):
//     the contracts (tracker, saver, record, fetch/render) import nothing
//     of distscrape but driver, a driver imports its contract (and driver)
//     only, the manager sees interfaces only and links no driver, and only
//     commands link drivers (cmd/distscrape/drivers.go, the list these
//     tests take the drivers from); the config knows them by registry.
//
// test/extmodule builds a real program in a separate module on top of this.
package boundary
