// Package e2e runs the generated clientset, informers and kubectl against a
// real apiloom server (server/testserver, embedded etcd) serving the example
// group, exactly as a user would.
package e2e
