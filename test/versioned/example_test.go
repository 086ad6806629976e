package versioned_test

import (
	"context"
	"fmt"

	"github.com/kopgo/kopgo/test/versioned"
)

// A Gadget converted to v2 and back keeps its data; spec.size is
// spec.count in v2.
func Example() {
	ctx := context.Background()
	v1 := &versioned.Gadget{Spec: versioned.GadgetSpec{Size: 3, Message: "hi"}}
	v1.Name = "g"
	v2 := &versioned.GadgetV2{}
	_ = versioned.ConvertV1ToV2(ctx, v1, v2)
	back := &versioned.Gadget{}
	_ = versioned.ConvertV2ToV1(ctx, v2, back)
	fmt.Println(v2.Name, v2.Spec.Count, back.Spec == v1.Spec)
	// Output: g 3 true
}
