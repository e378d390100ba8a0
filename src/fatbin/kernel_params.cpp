#include "fatbin/kernel_params.hpp"

#include <elf.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <regex>

namespace rgpu::fatbin {
namespace {

std::string c_string(std::span<const std::byte> b, uint64_t off) {
  if (off >= b.size()) throw FormatError("cubin string past the end");
  auto* p = reinterpret_cast<const char*>(b.data() + off);
  size_t n = strnlen(p, b.size() - off);
  if (n == b.size() - off) throw FormatError("unterminated cubin string");
  return {p, n};
}

constexpr uint8_t kEifmtSval = 0x04;  // attribute with a size and data
constexpr uint8_t kEiattrKparamInfo = 0x17;
constexpr uint8_t kStoCudaEntry = 0x10;  // st_other bit of a __global__

std::vector<KernelParam> params_from_nv_info(std::span<const std::byte> info) {
  std::vector<std::pair<uint16_t, KernelParam>> by_ordinal;
  uint64_t p = 0;
  while (p + 4 <= info.size()) {
    auto fmt = read_at<uint8_t>(info, p);
    auto attr = read_at<uint8_t>(info, p + 1);
    if (fmt != kEifmtSval) {
      p += 4;
      continue;
    }
    auto len = read_at<uint16_t>(info, p + 2);
    if (len > info.size() - p - 4) throw FormatError("nv.info attribute past its section");
    if (attr == kEiattrKparamInfo && len >= 12) {
      auto ordinal = read_at<uint16_t>(info, p + 8);
      auto offset = read_at<uint16_t>(info, p + 10);
      auto bits = read_at<uint32_t>(info, p + 12);
      by_ordinal.push_back({ordinal, KernelParam{offset, bits >> 18}});
    }
    p += 4 + len;
  }
  std::sort(by_ordinal.begin(), by_ordinal.end(), [](auto& a, auto& b) { return a.first < b.first; });
  std::vector<KernelParam> out;
  for (auto& [ord, param] : by_ordinal) out.push_back(param);
  return out;
}

uint32_t ptx_type_size(const std::string& t) {
  if (t == "u8" || t == "s8" || t == "b8") return 1;
  if (t == "u16" || t == "s16" || t == "b16" || t == "f16") return 2;
  if (t == "u32" || t == "s32" || t == "b32" || t == "f32") return 4;
  if (t == "u64" || t == "s64" || t == "b64" || t == "f64") return 8;
  throw FormatError("unknown PTX parameter type ." + t);
}

}  // namespace

std::vector<KernelInfo> kernels_in_cubin(std::span<const std::byte> elf) {
  auto eh = read_at<Elf64_Ehdr>(elf, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw FormatError("cubin is not a 64-bit ELF");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw FormatError("cubin section header size");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i) sections[i] = read_at<Elf64_Shdr>(elf, eh.e_shoff + i * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= sections.size()) throw FormatError("cubin section names missing");
  auto section = [&](const Elf64_Shdr& s) {
    if (s.sh_type == SHT_NOBITS) return std::span<const std::byte>();
    if (s.sh_offset > elf.size() || s.sh_size > elf.size() - s.sh_offset) throw FormatError("section past the cubin");
    return elf.subspan(s.sh_offset, s.sh_size);
  };
  auto names = section(sections[eh.e_shstrndx]);
  std::map<std::string, std::span<const std::byte>> nv_info;
  std::vector<std::string> entries;
  for (const auto& s : sections) {
    std::string name = c_string(names, s.sh_name);
    if (name.rfind(".nv.info.", 0) == 0) nv_info[name.substr(9)] = section(s);
    if (s.sh_type != SHT_SYMTAB) continue;
    if (s.sh_link >= sections.size()) throw FormatError("symbol table without strings");
    auto syms = section(s);
    auto strs = section(sections[s.sh_link]);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= syms.size(); off += sizeof(Elf64_Sym)) {
      auto sym = read_at<Elf64_Sym>(syms, off);
      if (ELF64_ST_TYPE(sym.st_info) == STT_FUNC && (sym.st_other & kStoCudaEntry))
        entries.push_back(c_string(strs, sym.st_name));
    }
  }
  std::vector<KernelInfo> out;
  for (const auto& name : entries) {
    auto it = nv_info.find(name);
    out.push_back({name, it == nv_info.end() ? std::vector<KernelParam>{} : params_from_nv_info(it->second)});
  }
  return out;
}

std::vector<KernelInfo> kernels_in_ptx(std::string_view ptx) {
  std::vector<KernelInfo> out;
  static const std::regex entry(R"(\.entry\s+([A-Za-z0-9_$.]+)\s*\(([^)]*)\))");
  static const std::regex param(
      R"(\.param\s+(?:\.align\s+(\d+)\s+)?\.(\w+)\s+(?:\.ptr\s+(?:\.\w+\s+)*)?[A-Za-z0-9_$.]+(?:\[(\d+)\])?)");
  std::string text(ptx);
  for (std::sregex_iterator it(text.begin(), text.end(), entry), end; it != end; ++it) {
    KernelInfo k{(*it)[1].str(), {}};
    std::string list = (*it)[2].str();
    uint32_t offset = 0;
    for (std::sregex_iterator p(list.begin(), list.end(), param); p != end; ++p) {
      uint32_t elem = ptx_type_size((*p)[2].str());
      uint32_t count = (*p)[3].matched ? static_cast<uint32_t>(std::stoul((*p)[3].str())) : 1;
      uint32_t align = (*p)[1].matched ? static_cast<uint32_t>(std::stoul((*p)[1].str())) : elem;
      if (align == 0 || (align & (align - 1))) throw FormatError("bad PTX parameter alignment");
      offset = (offset + align - 1) / align * align;
      k.params.push_back({offset, elem * count});
      offset += elem * count;
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<KernelInfo> kernels_in(const FatBinary& fb) {
  std::vector<KernelInfo> out;
  auto add = [&](std::vector<KernelInfo> found) {
    for (auto& k : found)
      if (std::none_of(out.begin(), out.end(), [&](const KernelInfo& o) { return o.name == k.name; }))
        out.push_back(std::move(k));
  };
  // Cubins first: their layouts are what the driver uses.
  for (const auto& e : fb.entries)
    if (e.kind == EntryKind::elf) add(kernels_in_cubin(e.image));
  for (const auto& e : fb.entries)
    if (e.kind == EntryKind::ptx)
      add(kernels_in_ptx({reinterpret_cast<const char*>(e.image.data()), e.image.size()}));
  return out;
}

}  // namespace rgpu::fatbin
