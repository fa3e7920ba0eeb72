// Package e2e runs the generated clientset, informers and kubectl against a
// real apiloom server (server/testserver, embedded etcd) serving the example
// group, exactly as a user would. APILOOM_E2E_ETCD_SERVERS puts the servers
// on an external etcd or kine instead, each test under a key prefix of its
// own (main_test.go); make test-postgres runs the suite's core that way on
// kine over PostgreSQL.
package e2e
