// Package doccheck holds a test, and nothing else, that every Go
// identifier kopgo's documentation names exists: the doc links of the
// module's doc comments ([status.Set], [controller.Builder.Concurrency],
// [*apply.TakeoverError]), which go vet and gopls leave unchecked (a link
// that does not resolve is rendered as plain text), the names of kopgo's
// packages that the comments' text and code examples use
// (reconciler.Result), and the kopgo identifiers that README.md,
// docs/*.md and CHANGELOG.md name in code spans and Go blocks
// (`kopcontroller.EnvFor`, `status.Access`, `Builder.CompleteCache`).
//
// Names resolve against the packages' export data, which `go list -export`
// builds (from the build cache when the module was built), so the test
// takes seconds.
//
// # Which names are checked
//
// In doc comments: every doc link, that is Name, Name.Member, pkg.Name or
// pkg.Name.Member in square brackets (an optional * before it), pkg being a
// name the package's files import (or an import path), the package's own
// name, or a kopgo or standard-library package; a lowercase Name alone is
// text, not a link. Indented code is not searched for links, and bracketed
// text that a link definition ("[text]: https://...") names is not a doc
// link. In the text and code of doc comments, the same names as in
// Markdown (below) are checked too, links or not.
//
// In Markdown: `pkg.Name` and `pkg.Name.Member` where pkg is one of kopgo's
// package names that no other module an operator imports uses (apply,
// reconciler, status, finalizers, gc, watch, owners, scope, observability,
// resources, testkit) or one of the aliases the packages' docs give
// (kopcontroller, koperrors, kopmeta); and `Type.Member` where Type is an
// exported type of a kopgo package. Relative links to files must point
// at files that exist. Bare names (`WithCachedKinds`) and the
// ambiguous controller., errors. and meta. are not checked.
//
// # CHANGELOG.md
//
// The CHANGELOG names API that is gone, on purpose: what was removed or
// renamed, and the old form in a migration line. Such a change is always
// marked **Breaking**, so a name that does not resolve is accepted inside a
// bullet marked **Breaking** and reported anywhere else (a typo, or a
// removal that is not marked Breaking).
package doccheck
