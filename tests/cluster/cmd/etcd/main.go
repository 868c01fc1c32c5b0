// Command etcd is the upstream etcd server, built from its pinned Go module so
// the test bed needs no prebuilt binary.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
