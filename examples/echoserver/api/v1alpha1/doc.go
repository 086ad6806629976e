// Package v1alpha1 is the EchoServer API, group echoserver.examples.kopgo.dev
// version v1alpha1: the custom resource of kopgo's declarative example
// operator (see package github.com/kopgo/kopgo/examples/echoserver).
//
//	apiVersion: echoserver.examples.kopgo.dev/v1alpha1
//	kind: EchoServer
//	metadata:
//	  name: hello
//	spec:
//	  message: hello, world
//	  replicas: 2
//	  port: 8080
//
// The CustomResourceDefinition is generated from these types with
// controller-gen into examples/echoserver/config/crd, and the deep-copy
// methods into zz_generated.deepcopy.go.
package v1alpha1
