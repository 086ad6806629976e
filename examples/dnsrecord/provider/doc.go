// Package provider is a small DNS provider: an in-memory store of DNS
// records behind a JSON HTTP API with bearer-token authentication, the
// external system that the DNSRecord example operator manages. The demo
// serves it in-process ([NewServer] is an [http.Handler], for httptest);
// cmd/provider serves it on its own, with its controls over HTTP. The
// end-to-end tests use the test kit's fake system
// (test/testkit/fakesystem) instead, which serves the same record API (a
// list under "resources") and refuses the same bodies through
// [Record.Validate].
//
// It is a test double built to be hostile in controlled ways: it fails a
// chosen fraction of requests, throttles with Retry-After, adds latency,
// lets a test change or delete records behind the operator's back, calls a
// hook at the instant a create is stored (before its answer is written, so
// that a test can kill the client there), and counts what it served.
//
// # The API
//
// Every request carries "Authorization: Bearer <token>"; a missing or
// unknown token is answered 401.
//
//	POST   /v1/records          create: {"zone","name","type","value","ttl","tag"} -> 201 Record (with its "id")
//	GET    /v1/records/{id}     read -> 200 Record, 404 when gone
//	PUT    /v1/records/{id}     update zone, name, type, value and ttl (the tag stays) -> 200 Record, 404 when gone
//	DELETE /v1/records/{id}     delete -> 204, 404 when gone
//	GET    /v1/records?tag=T    list the records with tag T (all without tag) -> 200 {"resources": [...]}, as fakesystem lists
//
// The tag is the client's: an owner or idempotency key it can search by
// (the operator passes its object's UID). The provider does not refuse a
// second record with the same tag, as most real APIs would not: a client
// that creates twice gets two records, and the tests count them.
// A bad record (an unknown type, a value that does not fit its type, a TTL
// out of range) is answered 400; errors carry {"error": "..."}.
//
// # Controls
//
// From Go, the [Server]'s methods: [Server.SetTokens], [Server.SetFaults],
// [Server.OnCreate], [Server.SetValue] and [Server.Remove] (drift),
// [Server.Records] and [Server.Stats]. Over HTTP, for a provider in another
// process, the same under /admin/ (no authentication: serve it on
// loopback), and [Admin] is their Go client:
//
//	GET    /admin/records       the live records
//	PUT    /admin/records/{id}  {"value": "..."}: change a record behind the client's back
//	DELETE /admin/records/{id}  delete a record behind the client's back
//	PUT    /admin/tokens        {"tokens": ["..."]}: the accepted tokens (rotation)
//	PUT    /admin/faults        a [Faults] as JSON (durations as "2s")
//	GET    /admin/stats         a [Stats]; DELETE starts a new count
package provider
