module benchrun.dev/stacks/go-nethttp

go 1.22
