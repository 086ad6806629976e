package fakesystem_test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/kopgo/kopgo/test/testkit/fakesystem"
)

// A system that loses the answer to the first create: the resource is
// stored, the client sees a 502, and finds the resource by its tag.
func Example() {
	sys, err := fakesystem.New(fakesystem.Options{Tokens: []string{"t0k3n"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer sys.Close()
	if err := sys.Inject(fakesystem.Fault{Method: http.MethodPost, Times: 1, LoseAnswer: true}); err != nil {
		fmt.Println(err)
		return
	}

	call := func(method, path, token, body string) {
		req, _ := http.NewRequest(method, sys.URL()+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			fmt.Println(err)
			return
		}
		defer func() { _ = resp.Body.Close() }()
		out, _ := io.ReadAll(resp.Body)
		fmt.Printf("%s %s: %d %s", method, path, resp.StatusCode, out)
	}
	call(http.MethodPost, "/v1/resources", "t0k3n", `{"tag": "uid-1", "size": 3}`)
	call(http.MethodGet, "/v1/resources?tag=uid-1", "t0k3n", "")
	call(http.MethodGet, "/v1/resources/res-1", "wrong", "")

	st := sys.Stats()
	fmt.Println("requests:", st.Requests, "created:", st.Created, "with tag uid-1:", len(sys.Find("uid-1")))
	// Output:
	// POST /v1/resources: 502 {"error":"injected fault: answer lost"}
	// GET /v1/resources?tag=uid-1: 200 {"resources":[{"id":"res-1","size":3,"state":"ready","tag":"uid-1"}]}
	// GET /v1/resources/res-1: 401 {"error":"missing, unknown or revoked bearer token"}
	// requests: 3 created: 1 with tag uid-1: 1
}

// Kill an operator process between the system's store of a create and its
// answer, and start it again: the operator must find the resource by its
// tag rather than create a second one.
func ExampleOperator_KillAt() {
	testCreateSurvivesAKill := func(t *testing.T) { //nolint:thelper // the body of a test of yours, not a helper
		sys := fakesystem.Start(t, fakesystem.Options{})

		cmd := exec.Command(fakesystem.Build(t, "../cmd/operator"), "--system-url", sys.URL())
		cmd.Env = append(os.Environ(), "KUBECONFIG=/path/to/the/test/cluster/kubeconfig")
		op := fakesystem.StartOperator(t, cmd)

		killed := op.KillAt(sys, func(w fakesystem.Write) bool { return w.Method == http.MethodPost })
		// ... create an object the operator acts on ...
		<-killed
		// ... wait until the object is Ready ...
		if n := len(sys.Resources()); n != 1 {
			t.Errorf("%d resources, want 1", n)
		}
	}
	_ = testCreateSurvivesAKill // a test function of your package
}
