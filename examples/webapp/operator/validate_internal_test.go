package operator

import (
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	webappv1 "github.com/kopgo/kopgo/examples/webapp/api/v1alpha1"
)

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		app    string // the WebApp's name; "web" if empty
		spec   webappv1.WebAppSpec
		fields []string // fields the error must name; none: valid
	}{
		{name: "tag", spec: webappv1.WebAppSpec{Image: "nginx:1.27"}},
		{name: "registry with port and path", spec: webappv1.WebAppSpec{Image: "registry.example.com:5000/team/web-app_2:v1.2.3-rc.1"}},
		{name: "digest", spec: webappv1.WebAppSpec{Image: "ghcr.io/org/app@sha256:" + strings.Repeat("ab", 32)}},
		{name: "tag and digest", spec: webappv1.WebAppSpec{Image: "app:1@sha256:" + strings.Repeat("0", 64)}},
		{name: "config keys", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{"GREETING": "hi", "log.level": "debug"}}},
		{name: "colons", spec: webappv1.WebAppSpec{Image: "nginx:::"}, fields: []string{"spec.image"}},
		{name: "upper case name", spec: webappv1.WebAppSpec{Image: "Nginx:1"}, fields: []string{"spec.image"}},
		{name: "space", spec: webappv1.WebAppSpec{Image: "nginx 1.27"}, fields: []string{"spec.image"}},
		{name: "short digest", spec: webappv1.WebAppSpec{Image: "app@sha256:abc"}, fields: []string{"spec.image"}},
		{name: "empty", spec: webappv1.WebAppSpec{}, fields: []string{"spec.image"}},
		{name: "port", spec: webappv1.WebAppSpec{Image: "app", Port: 70000}, fields: []string{"spec.port"}},
		{name: "every problem at once", spec: webappv1.WebAppSpec{Image: "a b", Port: -1, Config: map[string]string{"1X": "", "OK": "", "a=b": ""}},
			fields: []string{"spec.image", "spec.port", "spec.config[1X]", "spec.config[a=b]"}},
		{name: "negative replicas", spec: webappv1.WebAppSpec{Image: "app", Replicas: new(int32(-1))}, fields: []string{"spec.replicas"}},

		// Valid object names that cannot name the children.
		{name: "63 characters", app: strings.Repeat("a", 63), spec: webappv1.WebAppSpec{Image: "app"}},
		{name: "64 characters: too long for a label value", app: strings.Repeat("a", 64), spec: webappv1.WebAppSpec{Image: "app"},
			fields: []string{"metadata.name"}},
		{name: "253 characters", app: strings.Repeat("a", 253), spec: webappv1.WebAppSpec{Image: "app"}, fields: []string{"metadata.name"}},
		{name: "dotted: no Service name", app: "web.example", spec: webappv1.WebAppSpec{Image: "app"}, fields: []string{"metadata.name"}},
		{name: "leading digit: no Service name", app: "1web", spec: webappv1.WebAppSpec{Image: "app"}, fields: []string{"metadata.name"}},

		// Config that fits no ConfigMap.
		{name: "key of 253 characters", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{strings.Repeat("K", 253): ""}}},
		{name: "key of 254 characters", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{strings.Repeat("K", 254): ""}},
			fields: []string{"spec.config[" + strings.Repeat("K", 254) + "]"}},
		{name: "key dot", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{".": "", "..": ""}},
			fields: []string{"spec.config[.]", "spec.config[..]"}},
		{name: "values server-side apply cannot carry", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{
			"DEL": "a\x7f", "C1": "\u0080", "NEL": "a\u0085b", "NONCHAR": "\uffff", "NUL_BOM_CR": "\x00\ufeff\r\n"}},
			fields: []string{"spec.config[C1]", "spec.config[DEL]", "spec.config[NEL]", "spec.config[NONCHAR]"}},
		{name: "1 MiB of values", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{
			"A": strings.Repeat("x", 1<<19), "B": strings.Repeat("x", 1<<19)}}},
		{name: "over 1 MiB of values", spec: webappv1.WebAppSpec{Image: "app", Config: map[string]string{
			"A": strings.Repeat("x", 1<<19), "B": strings.Repeat("x", 1<<19+1)}}, fields: []string{"spec.config"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.app
			if name == "" {
				name = "web"
			}
			errs := validate(&webappv1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: tc.spec})
			if len(errs) != len(tc.fields) {
				t.Fatalf("got %d errors %v, want %d naming %v", len(errs), errs, len(tc.fields), tc.fields)
			}
			for i, f := range tc.fields {
				if got := errs[i].Field; got != f {
					t.Errorf("error %d names %s, want %s (%v)", i, got, f, errs[i])
				}
			}
		})
	}
}
