// Command apiloom serves every resource generated from apis/ with embedded
// etcd by default:
//
//	apiloom --data-dir .apiloom
//	kubectl --kubeconfig .apiloom/kubeconfig get databases
package main

import (
	"github.com/apiloom/apiloom/generated/apiserver"
	serverpkg "github.com/apiloom/apiloom/server/apiserver"
)

func main() { serverpkg.Main("apiloom", apiserver.Install) }
