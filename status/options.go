package status

// PatchOptions are the per-call options of [Patcher.Patch].
type PatchOptions struct {
	// Force takes ownership of status fields another field manager owns
	// with a different value, instead of failing. Patch starts from true:
	// status is the controller's own report, and the object as read already
	// holds every other writer's values.
	Force bool
	// DryRun asks the API server to validate and compute the write without
	// persisting it. A dry run is not remembered: the next Patch compares
	// against the same snapshot.
	DryRun bool
}

// PatchOption is a per-call option of [Patcher.Patch]: [Force] or [DryRun].
type PatchOption interface {
	// ApplyToPatchOptions sets the option on o.
	ApplyToPatchOptions(o *PatchOptions)
}

// Force sets [PatchOptions.Force]. Force(false) makes a field another
// manager owns with a different value a failure of kind Invalid (retrying
// the same write cannot succeed) that names the manager and the field.
type Force bool

// ApplyToPatchOptions implements [PatchOption].
func (f Force) ApplyToPatchOptions(o *PatchOptions) { o.Force = bool(f) }

// DryRun sets [PatchOptions.DryRun].
type DryRun bool

// ApplyToPatchOptions implements [PatchOption].
func (d DryRun) ApplyToPatchOptions(o *PatchOptions) { o.DryRun = bool(d) }

// ApplyToPatchOptions implements [PatchOption]: o's fields replace the
// target's, so a PatchOptions value can be passed whole.
func (o *PatchOptions) ApplyToPatchOptions(target *PatchOptions) { *target = *o }

func patchOptions(opts []PatchOption) PatchOptions {
	o := PatchOptions{Force: true}
	for _, opt := range opts {
		opt.ApplyToPatchOptions(&o)
	}
	return o
}
