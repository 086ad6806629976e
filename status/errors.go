package status

import (
	"unicode/utf8"

	koperrors "github.com/kopgo/kopgo/errors"
)

// maxMessage is the API server's limit on a condition message.
const maxMessage = 32768

// SetError reports err in obj's conditions (kuberator's WithStatusError):
// Ready=False with the error's kind as reason ("NotFound", "Invalid",
// "Unavailable", ...) and its text as message. A terminal error
// ([koperrors.Terminal]) also sets Stalled=True, since retrying will not
// help; any other error removes Stalled and sets Reconciling=True: the
// controller retries. nil is [MarkReady] with reason "Succeeded".
func SetError(obj Setter, err error) bool {
	if err == nil {
		return MarkReady(obj, "Succeeded", "")
	}
	reason := koperrors.KindOf(err).String()
	msg := truncate(err.Error())
	if koperrors.IsTerminal(err) {
		return MarkStalled(obj, reason, msg)
	}
	changed := Set(obj, conditionFalse(Ready, reason, msg))
	changed = Set(obj, conditionTrue(Reconciling, reason, msg)) || changed
	return Remove(obj, Stalled) || changed
}

func truncate(msg string) string {
	if len(msg) <= maxMessage {
		return msg
	}
	const ellipsis = "…"
	cut := maxMessage - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(msg[cut]) {
		cut--
	}
	return msg[:cut] + ellipsis
}
