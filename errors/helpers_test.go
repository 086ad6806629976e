package errors_test

import clientcmdapi "k8s.io/client-go/tools/clientcmd/api"

func clientcmdapiEmpty() *clientcmdapi.Config { return clientcmdapi.NewConfig() }
