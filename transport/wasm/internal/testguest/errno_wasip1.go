package main

import "syscall"

const errNotCapable = syscall.ENOTCAPABLE
