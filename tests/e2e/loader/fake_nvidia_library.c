/* Stands in for a library of NVIDIA's driver installation (libcuda.so.1,
 * libnvcuvid.so.1) in loader_audit_test.sh: a process that loaded this file
 * instead of rgpu's finds the marker symbol. */
int rgpu_test_fake_nvidia_library(void) { return 1; }
