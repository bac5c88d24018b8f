package goplugin_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"time"
)

// pluginPathEnv tells a fake host where the test plugin is.
const pluginPathEnv = "YOLOP_GOPLUGIN_TEST_PLUGIN"

// fakeHost plays a host process: it starts the test plugin in mode
// through the transport, prints "plugin <pid> ns <bool>" and, for the tree
// mode, the plugin's "grandchild <pid>" line, then "ready", and waits to
// be killed.
func fakeHost(mode string) int {
	testPlugin = os.Getenv(pluginPathEnv)
	inst, err := newTransport(nil).Start(context.Background(), spec("fake-host-"+mode, mode))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	p := inst.(interface{ OwnPIDNamespace() bool })
	fmt.Printf("plugin %d ns %t\n", inst.PID(), p.OwnPIDNamespace())
	if mode == "tree" {
		line, err := bufio.NewReader(inst.Stdout()).ReadString('\n')
		if err != nil {
			fmt.Fprintln(os.Stderr, "reading the tree plugin:", err)
			return 1
		}
		fmt.Print(line)
	}
	fmt.Println("ready")
	for {
		time.Sleep(time.Hour)
	}
}
