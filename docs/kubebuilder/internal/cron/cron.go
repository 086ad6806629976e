// Package cron parses the schedules of the migration guide's CronJob: the
// five fields of cron (minute, hour, day of month, month, day of week),
// each "*", "*/n", a number, a range "a-b" or a list of those, and
// "@every <duration>". kubebuilder's tutorial uses github.com/robfig/cron;
// the guide carries this small parser instead, so that kopgo's go.mod
// needs no module for its documentation. Both controllers of the guide use
// it the same way. Unlike cron, a day must match both the day of month and
// the day of week when both are restricted.
package cron

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Schedule says when the runs after a time are.
type Schedule interface {
	// Next returns the first run strictly after t.
	Next(t time.Time) time.Time
}

// Parse parses a schedule.
func Parse(spec string) (Schedule, error) {
	if d, ok := strings.CutPrefix(spec, "@every "); ok {
		every, err := time.ParseDuration(strings.TrimSpace(d))
		if err != nil || every < time.Second {
			return nil, fmt.Errorf("schedule %q: @every needs a duration of at least 1s", spec)
		}
		return constant(every), nil
	}
	fields := strings.Fields(spec)
	if len(fields) != 5 {
		return nil, fmt.Errorf("schedule %q: want 5 fields (minute hour day-of-month month day-of-week), got %d", spec, len(fields))
	}
	bounds := [5][2]int{{0, 59}, {0, 23}, {1, 31}, {1, 12}, {0, 6}}
	var s fieldSchedule
	for i, f := range fields {
		set, err := parseField(f, bounds[i][0], bounds[i][1])
		if err != nil {
			return nil, fmt.Errorf("schedule %q: field %d: %w", spec, i+1, err)
		}
		s[i] = set
	}
	return s, nil
}

// constant runs every d, counted from the time given to Next, at whole
// seconds (robfig/cron's @every).
type constant time.Duration

func (c constant) Next(t time.Time) time.Time {
	return t.Add(time.Duration(c)).Truncate(time.Second)
}

// fieldSchedule holds, per field, the values that match.
type fieldSchedule [5]map[int]bool

func (s fieldSchedule) Next(t time.Time) time.Time {
	t = t.Truncate(time.Minute).Add(time.Minute)
	limit := t.AddDate(5, 0, 0) // a schedule that never matches (Feb 30) ends here
	for t.Before(limit) {
		switch {
		case !s[3][int(t.Month())]:
			t = time.Date(t.Year(), t.Month()+1, 1, 0, 0, 0, 0, t.Location())
		case !s[2][t.Day()] || !s[4][int(t.Weekday())]:
			t = time.Date(t.Year(), t.Month(), t.Day()+1, 0, 0, 0, 0, t.Location())
		case !s[1][t.Hour()]:
			t = t.Truncate(time.Hour).Add(time.Hour)
		case !s[0][t.Minute()]:
			t = t.Add(time.Minute)
		default:
			return t
		}
	}
	return time.Time{}
}

func parseField(f string, lo, hi int) (map[int]bool, error) {
	set := map[int]bool{}
	for part := range strings.SplitSeq(f, ",") {
		from, to, step := lo, hi, 1
		rng, stepText, hasStep := strings.Cut(part, "/")
		if hasStep {
			n, err := strconv.Atoi(stepText)
			if err != nil || n < 1 {
				return nil, fmt.Errorf("step %q: not a positive number", stepText)
			}
			step = n
		}
		if rng != "*" {
			a, b, isRange := strings.Cut(rng, "-")
			var err error
			if from, err = strconv.Atoi(a); err != nil {
				return nil, fmt.Errorf("%q: not a number", a)
			}
			to = from
			if isRange {
				if to, err = strconv.Atoi(b); err != nil {
					return nil, fmt.Errorf("%q: not a number", b)
				}
			}
			if hasStep && !isRange {
				to = hi
			}
		}
		if from < lo || to > hi || from > to {
			return nil, fmt.Errorf("%q: out of range %d-%d", part, lo, hi)
		}
		for v := from; v <= to; v += step {
			set[v] = true
		}
	}
	return set, nil
}
