package testkit

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// What a pod on a kwok node does is decided by kwok stages: rules that
// match a pod by its fields and patch its status. By default a pod starts,
// becomes Running and Ready and stays so; a pod that a Job owns then
// succeeds at once. A test chooses another fate for a pod with the
// [PodOutcomeLabel] label, set on the pod or on the template of the
// workload that makes it, and tunes it with annotations:
//
//	template.Labels[testkit.PodOutcomeLabel] = testkit.PodOutcomeFail
//	template.Annotations[testkit.PodExitCodeAnnotation] = "42"
//
// A pod's fate follows its label when the label changes: a pending pod
// whose label is removed starts.
const (
	// PodOutcomeLabel is the label that chooses what a pod does. Its
	// values are the PodOutcome constants; a pod without it starts and
	// stays Running and Ready (a Job's pod then succeeds at once).
	PodOutcomeLabel = "testkit.kopgo.dev/pod-outcome"

	// PodOutcomeSucceed: the pod runs (Running, Ready), then after
	// [PodDelayAnnotation] its containers exit 0 (reason Completed) and
	// the pod is Succeeded.
	PodOutcomeSucceed = "succeed"
	// PodOutcomeFail: the pod runs (Running, Ready), then after
	// [PodDelayAnnotation] its containers exit with [PodExitCodeAnnotation]
	// (default 1), reason [PodReasonAnnotation] (default "Error") and
	// message [PodMessageAnnotation], and the pod is Failed, as a pod with
	// restartPolicy Never ends. A Job's podFailurePolicy sees the code.
	PodOutcomeFail = "fail"
	// PodOutcomePending: the pod is scheduled but never starts. It stays
	// Pending, each container waiting with reason [PodReasonAnnotation]
	// (default "ContainerCreating"; "ImagePullBackOff" is another common
	// one) and message [PodMessageAnnotation].
	PodOutcomePending = "pending"
	// PodOutcomeCrashLoop: the pod's containers keep exiting and being
	// restarted. The pod is Running and never Ready; each container waits
	// in CrashLoopBackOff with its last state terminated by
	// [PodExitCodeAnnotation] (default 1) and [PodReasonAnnotation]
	// (default "Error"), and its restartCount goes up by one every
	// [PodDelayAnnotation] (default 1s).
	PodOutcomeCrashLoop = "crash-loop"
	// PodOutcomeNotReady: the pod runs but its containers never become
	// ready, as if a readiness probe kept failing: Running, Ready=False
	// with reason ContainersNotReady.
	PodOutcomeNotReady = "not-ready"
)

// Annotations that tune a pod's outcome. A missing annotation takes the
// default that the outcome names.
const (
	// PodDelayAnnotation is how long a pod labelled
	// [PodOutcomeSucceed] or [PodOutcomeFail] runs before it ends, or
	// how long a [PodOutcomeCrashLoop] container waits between restarts:
	// a Go duration such as "2s".
	PodDelayAnnotation = "testkit.kopgo.dev/delay"
	// PodExitCodeAnnotation is the exit code (a decimal integer) of the
	// containers of a pod labelled [PodOutcomeFail] or
	// [PodOutcomeCrashLoop].
	PodExitCodeAnnotation = "testkit.kopgo.dev/exit-code"
	// PodReasonAnnotation is the reason of the containers' terminated
	// state ([PodOutcomeFail], [PodOutcomeCrashLoop]) or waiting state
	// ([PodOutcomePending]).
	PodReasonAnnotation = "testkit.kopgo.dev/reason"
	// PodMessageAnnotation is the message that goes with
	// [PodReasonAnnotation].
	PodMessageAnnotation = "testkit.kopgo.dev/message"
)

// podStages are testkit's kwok stages for pods, one file per outcome. They
// live here, not under bin/, because they and the constants above are one
// vocabulary and change together; the library still imports nothing from
// kwok, which reads them as YAML.
//
//go:embed stages/*.yaml
var podStages embed.FS

// writePodStages writes testkit's pod stages into one file in dir, for
// kwok's --config, and returns its path.
func writePodStages(dir string) (string, error) {
	files, err := fs.Glob(podStages, "stages/*.yaml")
	if err != nil {
		return "", fmt.Errorf("list pod stages: %w", err)
	}
	var buf bytes.Buffer
	for _, f := range files {
		data, err := podStages.ReadFile(f)
		if err != nil {
			return "", fmt.Errorf("read pod stage %s: %w", f, err)
		}
		buf.WriteString("---\n")
		buf.Write(data)
	}
	path := filepath.Join(dir, "kwok-pod-stages.yaml")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		return "", fmt.Errorf("write pod stages: %w", err)
	}
	return path, nil
}
