package git_test

import (
	"errors"
	"fmt"

	"yolop.dev/registry/git"
)

func ExampleValidateURL() {
	for _, raw := range []string{
		"https://github.com/owner/yolop-extension-demo.git",
		"git@github.com:owner/yolop-extension-demo.git",
		"ext::sh -c 'touch /tmp/pwned'",
		"https://me:s3cret@example.com/repo.git",
	} {
		u, err := git.ValidateURL(raw, git.Options{})
		fmt.Println(u, errors.Is(err, git.ErrURLRejected))
	}
	// Output:
	// https://github.com/owner/yolop-extension-demo.git false
	// git@github.com:owner/yolop-extension-demo.git false
	//  true
	//  true
}
