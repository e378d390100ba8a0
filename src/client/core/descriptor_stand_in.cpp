#include "client/core/descriptor_stand_in.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace rgpu::client {
namespace {

constexpr char kMagic[8] = {'R', 'G', 'P', 'U', 'F', 'D', 'H', '1'};

struct Contents {
  char magic[8];
  proto::DescriptorToken token;
};

// Sealed so that no holder can change or resize what others will read.
constexpr int kSeals = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL;

}  // namespace

int make_stand_in(const proto::DescriptorToken& token) {
  int fd = memfd_create("rgpu-shareable-handle", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0) return -1;
  Contents c;
  std::memcpy(c.magic, kMagic, sizeof kMagic);
  c.token = token;
  if (pwrite(fd, &c, sizeof c, 0) != static_cast<ssize_t>(sizeof c) || fcntl(fd, F_ADD_SEALS, kSeals) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

bool read_stand_in(int fd, proto::DescriptorToken* token) {
  struct stat st;
  int seals = fcntl(fd, F_GET_SEALS);  // fails for anything but a memfd
  if (seals < 0 || (seals & kSeals) != kSeals || fstat(fd, &st) != 0 ||
      st.st_size != static_cast<off_t>(sizeof(Contents)))
    return false;
  Contents c;
  if (pread(fd, &c, sizeof c, 0) != static_cast<ssize_t>(sizeof c) ||
      std::memcmp(c.magic, kMagic, sizeof kMagic) != 0)
    return false;
  *token = c.token;
  return true;
}

}  // namespace rgpu::client
