package provider_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/kopgo/kopgo/examples/dnsrecord/provider"
)

// A provider served in-process, as a test serves it: a create answered
// 201, then the same record changed behind the client's back.
func Example() {
	s := provider.NewServer(provider.Options{Tokens: []string{"s3cret"}})
	srv := httptest.NewServer(s)
	defer srv.Close()

	body := `{"zone":"example.com","name":"www","type":"A","value":"192.0.2.1","ttl":300,"tag":"my-uid"}`
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/records", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer s3cret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		panic(err)
	}
	_ = resp.Body.Close()
	fmt.Println(resp.Status)

	rec := s.Find("my-uid")[0]
	_ = s.SetValue(rec.ID, "198.51.100.7") // drift
	fmt.Println(rec.ID, s.Records()[0].Value, s.Stats().Creates)
	// Output:
	// 201 Created
	// rec-1 198.51.100.7 1
}

// Throttle a tenth of the requests and fail another tenth, from the
// start.
func ExampleFaults() {
	s := provider.NewServer(provider.Options{
		Tokens: []string{"s3cret"},
		Faults: provider.Faults{TooManyRequests: 0.1, ServerError: 0.1},
	})
	fmt.Println(s.Faults().TooManyRequests, s.Faults().RetryAfter)
	// Output: 0.1 1s
}
