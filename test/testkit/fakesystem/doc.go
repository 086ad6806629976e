// Package fakesystem is a fake external system for testing an operator of
// external resources (one built on kopgo's external package, or any other)
// against a real API server: a REST-shaped JSON API over HTTP on loopback,
// in the test's process, that fails in the ways real systems fail, counts
// what it served, and lets a test SIGKILL the operator between a write and
// its answer. It replaces the fake provider, fault switches and kill
// harness that each such operator's tests would otherwise write.
//
//	sys := fakesystem.Start(t, fakesystem.Options{Tokens: []string{"t0k3n"}})
//	if err := sys.Inject(fakesystem.Fault{Rate: 0.1, Status: 503, RetryAfter: time.Second}); err != nil {
//		t.Fatal(err)
//	}
//	... run the operator with sys.URL() and token "t0k3n", create objects ...
//	if got := sys.Find(string(obj.UID)); len(got) != 1 {
//		t.Errorf("%d resources for %s, want 1", len(got), obj.Name)
//	}
//	t.Logf("%d requests, peak %d/s", sys.Stats().Requests, sys.Stats().PeakPerSecond)
//
// # The API
//
// One collection of resources, at [Options.Path] ([DefaultPath] by
// default). A resource is any JSON object; the system adds "id" (assigned
// at create), "state" and keeps "tag", the creator's key:
//
//	POST   /v1/resources        create: {"tag": "...", ...fields} -> 201 (202 if asynchronous) the resource
//	GET    /v1/resources?tag=T  the resources with tag T (all without tag) -> 200 {"resources": [...]}, oldest first
//	GET    /v1/resources/{id}   read -> 200 the resource, 404 when gone
//	PUT    /v1/resources/{id}   replace the fields (id, tag, state stay) -> 200 (202)
//	PATCH  /v1/resources/{id}   merge the fields (null removes one) -> 200 (202)
//	DELETE /v1/resources/{id}   -> 204 (202 with state "deleting"); 404 when gone
//
// A write to a resource being deleted is answered 409, as cloud APIs
// answer a second DELETE. Errors carry {"error": "..."}. The tag is how an
// operator's external.Finder finds a resource whose create answer it never
// got: send the object's UID as tag, and list by it. The system accepts a
// second resource with the same tag, so duplicates can be counted
// ([System.Find]).
//
// With [Options.Validate] the system checks a write's body as a real API
// does: the function's error is answered 400 {"error": <its message>}
// and nothing is stored.
//
// With [Options.Tokens] (and [System.SetTokens], [System.Revoke]) every
// request needs "Authorization: Bearer <token>"; others are answered 401.
//
// # Asynchronous writes
//
// [Async] (in Options, or [System.SetAsync]) makes creates, updates or
// deletes take time: the write is answered 202 Accepted and the resource
// shows state "creating", "updating" or "deleting" until the duration has
// passed; then it is "ready", or gone (404).
//
// # Faults
//
// [System.Inject] adds [Fault]s, scripted by method, path pattern and
// count (Skip, Times) or drawn with a probability (Rate) from a seeded
// source: any status code, with or without Retry-After; latency; a hung
// call that ends only when the client gives up; a reset connection; and a
// lost answer, where the write happens and the client sees a 502 or a
// reset. Faults come before authentication, as at a gateway.
//
// # Counting
//
// Every request is logged ([System.Requests]: time, method, path, token,
// status, whether a fault applied). [System.Count] counts the requests of
// a method to a path pattern, [System.Stats] counts by method, the peak
// per second and the resources created and deleted, [System.InFlight]
// the requests not answered yet (hung ones included) and [System.Pending]
// which they are. Assert on these
// counts, not on time.
//
// # Killing the operator at the worst moment
//
// [System.OnWrite] calls a function after a write changed the store and
// before its answer is written. [StartOperator] runs an operator binary
// ([Build] compiles one; the test binary itself works too) as a child
// process, and [Operator.KillAt] arms that hook to SIGKILL it there and
// start it again, so a test sees what the operator does with a resource
// whose creation it never heard of:
//
//	op := fakesystem.StartOperator(t, cmd)
//	killed := op.KillAt(sys, func(w fakesystem.Write) bool { return w.Method == http.MethodPost })
//	... create an object ...
//	<-killed // the operator died after the create was stored, and runs again
//
// [System.OnAnswer] calls a function once a request's answer has reached
// its client, and [Operator.KillAfter] arms it: kill the operator there to
// have it die after it got a create's answer and before it recorded the
// ID, or at its first read of the new resource ([Answered.Resource] of
// the create tells which ID it got):
//
//	killed := op.KillAfter(sys, func(a fakesystem.Answered) bool {
//		return a.Method == http.MethodPost && a.Status == http.StatusCreated
//	})
//
// To kill it before the system stores a call instead, hold the call with
// a Fault{Method: http.MethodPost, Times: 1, Hang: true}, wait until
// [System.Pending] lists it (or [System.InFlight] counts it, when no other
// call can be in flight), and call [Operator.Restart]: the hung call ends
// with its client, unserved.
//
// Everything started here (the server, the operator's processes) is
// stopped when the test ends, also when it fails.
package fakesystem
