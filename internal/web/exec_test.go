package web_test

import "os/exec"

var execCommand = exec.Command
