// Package boundary keeps distscrape usable as a library. Its tests load the
// module's packages with golang.org/x/tools/go/packages and check what the
// compiler cannot check on its own:
//
//   - no exported signature of a public package mentions an internal/ type
//     (a user outside the module could not implement or call it);
//   - the import rules of docs/architecture.md (section "Import rules"):
//     the contracts (tracker, saver) import nothing of distscrape, an engine
//     or a saver driver imports its contract only, the manager sees
//     interfaces only and links no driver, and only commands and
//     internal/app/config choose implementations.
//
// test/extmodule builds a real program in a separate module on top of this.
package boundary
