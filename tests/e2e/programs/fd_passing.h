// Passing file descriptors between two application processes over a Unix
// socket (SCM_RIGHTS), as NVIDIA's memMapIPCDrv and
// streamOrderedAllocationIPC samples do, and starting the second process:
// this program again, run with "child <socket>" so that it has a CUDA
// client of its own.
#pragma once
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

// Sends `fd` with `n` bytes of `data` (at least one byte travels).
static bool send_fd(int socket, int fd, const void* data, size_t n) {
  char byte = 0;
  iovec iov{n ? const_cast<void*>(data) : &byte, n ? n : 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  c->cmsg_level = SOL_SOCKET;
  c->cmsg_type = SCM_RIGHTS;
  c->cmsg_len = CMSG_LEN(sizeof(int));
  std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
  return sendmsg(socket, &msg, 0) == static_cast<ssize_t>(iov.iov_len);
}

// Receives a descriptor (-1 when none came) and the n bytes sent with it.
static int receive_fd(int socket, void* data, size_t n) {
  char byte;
  iovec iov{n ? data : &byte, n ? n : 1};
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  msg.msg_control = control;
  msg.msg_controllen = sizeof control;
  if (recvmsg(socket, &msg, MSG_WAITALL) != static_cast<ssize_t>(iov.iov_len)) return -1;
  cmsghdr* c = CMSG_FIRSTHDR(&msg);
  if (!c || c->cmsg_type != SCM_RIGHTS) return -1;
  int fd;
  std::memcpy(&fd, CMSG_DATA(c), sizeof fd);
  return fd;
}

// Starts this program as "argv0 child <socket>"; *socket is this side's end.
static pid_t start_child(const char* argv0, int* socket) {
  int pair[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) return -1;
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    close(pair[0]);
    std::string fd = std::to_string(pair[1]);
    execl("/proc/self/exe", argv0, "child", fd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  close(pair[1]);
  *socket = pair[0];
  return pid;
}

// Whether the child ran to a clean exit.
static bool child_passed(pid_t pid) {
  int status = 0;
  return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}
