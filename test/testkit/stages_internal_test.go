package testkit

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The stages are YAML that kwok reads; the constants are the Go side of the
// same vocabulary. Each outcome and annotation must appear in the stages, so
// that a renamed constant cannot leave the stages behind.
func TestPodStagesUseTheConstants(t *testing.T) {
	path, err := writePodStages(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	stages := string(data)
	for _, s := range []string{
		PodOutcomeLabel, PodDelayAnnotation, PodExitCodeAnnotation, PodReasonAnnotation, PodMessageAnnotation,
	} {
		if !strings.Contains(stages, `"`+s+`"`) {
			t.Errorf("no stage refers to %q", s)
		}
	}
	for _, outcome := range []string{PodOutcomeSucceed, PodOutcomeFail, PodOutcomePending, PodOutcomeCrashLoop, PodOutcomeNotReady} {
		if !strings.Contains(stages, `"`+outcome+`"`) {
			t.Errorf("no stage selects outcome %q", outcome)
		}
	}
	if n, want := strings.Count(stages, "\nkind: Stage\n"), 6; n != want {
		t.Errorf("%s holds %d stages, want %d", filepath.Base(path), n, want)
	}
}
