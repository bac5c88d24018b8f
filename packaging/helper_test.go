package packaging

const helperEnv = "PACKAGING_TEST_HELPER"

func runHelper() int { return 0 }
