#include "fatbin/kernel_params.hpp"

#include <elf.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <optional>

namespace rgpu::fatbin {
namespace {

// --- cubin -----------------------------------------------------------------

std::string c_string(std::span<const std::byte> b, uint64_t off) {
  if (off >= b.size()) throw FormatError("cubin string past its table");
  auto* p = reinterpret_cast<const char*>(b.data() + off);
  size_t n = strnlen(p, b.size() - off);
  if (n == b.size() - off) throw FormatError("unterminated cubin string");
  return {p, n};
}

// .nv.info records: u8 format, u8 attribute, then either a 2-byte value
// (NVAL/BVAL/HVAL) or, for SVAL, a u16 length and that many bytes.
constexpr uint8_t kEifmtNval = 0x01, kEifmtBval = 0x02, kEifmtHval = 0x03, kEifmtSval = 0x04;
constexpr uint8_t kEiattrKparamInfo = 0x17;
constexpr uint8_t kEiattrCbankParamSize = 0x19;  // bytes of all parameters
constexpr uint8_t kStoCudaEntry = 0x10;          // st_other bit of a __global__

// KPARAM_INFO value (as cudaparsers and CuAssembler decode it): u32 index,
// u16 ordinal, u16 offset, u32 whose bits 18..31 are the size (bits 0..17:
// pointee alignment, space, cbank flag).
struct KparamInfo {
  uint32_t index;
  uint16_t ordinal;
  uint16_t offset;
  uint32_t bits;
};
static_assert(sizeof(KparamInfo) == 12);

std::vector<KernelParam> params_from_nv_info(std::span<const std::byte> info) {
  std::vector<KparamInfo> found;
  std::optional<uint32_t> cbank_size;
  for (uint64_t p = 0; p < info.size();) {
    auto fmt = read_at<uint8_t>(info, p);
    auto attr = read_at<uint8_t>(info, p + 1);
    auto value = read_at<uint16_t>(info, p + 2);
    p += 4;
    if (fmt == kEifmtHval && attr == kEiattrCbankParamSize) cbank_size = value;
    if (fmt == kEifmtNval || fmt == kEifmtBval || fmt == kEifmtHval) continue;
    if (fmt != kEifmtSval) throw FormatError("unknown .nv.info record format " + std::to_string(fmt));
    if (value > info.size() - p) throw FormatError(".nv.info record past its section");
    if (attr == kEiattrKparamInfo) {
      if (value != sizeof(KparamInfo)) throw FormatError("KPARAM_INFO record of unexpected size");
      found.push_back(read_at<KparamInfo>(info, p));
    }
    p += value;
  }
  std::sort(found.begin(), found.end(), [](auto& a, auto& b) { return a.ordinal < b.ordinal; });
  std::vector<KernelParam> out;
  for (const auto& k : found) {
    if (k.ordinal != out.size()) throw FormatError("KPARAM_INFO ordinals not 0..n-1");
    KernelParam param{k.offset, k.bits >> 18};
    if (cbank_size && param.offset + param.size > *cbank_size)
      throw FormatError("kernel parameter past the parameter bank");
    out.push_back(param);
  }
  return out;
}

// --- PTX -------------------------------------------------------------------

std::string strip_comments(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, 2) == "//") {
      i = s.find('\n', i);
      if (i == s.npos) break;
    } else if (s.substr(i, 2) == "/*") {
      size_t e = s.find("*/", i + 2);
      if (e == s.npos) break;
      out += ' ';
      i = e + 2;
    } else {
      out += s[i++];
    }
  }
  return out;
}

bool space(char c) { return std::isspace(static_cast<unsigned char>(c)); }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.'; }

std::vector<std::string_view> words(std::string_view s) {
  std::vector<std::string_view> out;
  for (size_t i = 0;;) {
    while (i < s.size() && space(s[i])) ++i;
    if (i == s.size()) return out;
    size_t b = i;
    while (i < s.size() && !space(s[i])) ++i;
    out.push_back(s.substr(b, i - b));
  }
}

uint32_t number(std::string_view s) {
  if (s.empty() || s.size() > 9 || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    throw FormatError("bad number in PTX parameter: " + std::string(s));
  uint32_t v = 0;
  for (char c : s) v = v * 10 + static_cast<uint32_t>(c - '0');
  return v;
}

// .u8/.s16/.b32/.f64 ...: class letter, then width in bits.
uint32_t ptx_type_size(std::string_view t) {
  static const std::map<std::string_view, uint32_t> kBytes{{"8", 1}, {"16", 2}, {"32", 4}, {"64", 8}};
  static constexpr std::string_view kClasses = "usbf";
  auto it = t.size() >= 3 ? kBytes.find(t.substr(2)) : kBytes.end();
  if (it == kBytes.end() || t[0] != '.' || kClasses.find(t[1]) == kClasses.npos)
    throw FormatError("unknown PTX parameter type " + std::string(t));
  return it->second;
}

// One `.param [.align A] .type [.ptr <space> .align P] name[N]`; the
// alignment after .ptr is the pointee's, not the parameter's.
KernelParam ptx_param(std::string_view decl, uint32_t& offset) {
  auto w = words(decl);
  if (w.size() < 3 || w[0] != ".param") throw FormatError("bad PTX parameter: " + std::string(decl));
  size_t i = 1;
  std::optional<uint32_t> align;
  if (w[i] == ".align") {
    if (w.size() < 5) throw FormatError("bad PTX parameter: " + std::string(decl));
    align = number(w[i + 1]);
    i += 2;
  }
  uint32_t elem = ptx_type_size(w[i]);
  std::string_view name = w.back();
  uint32_t count = 1;
  if (size_t open = name.find('['); open != name.npos) {
    if (name.back() != ']') throw FormatError("bad PTX array parameter: " + std::string(name));
    count = number(name.substr(open + 1, name.size() - open - 2));
  }
  uint32_t a = align.value_or(elem);
  if (a == 0 || (a & (a - 1)) || a > 4096) throw FormatError("bad PTX parameter alignment");
  if (count > (1u << 20)) throw FormatError("PTX parameter too large");
  offset = (offset + a - 1) / a * a;
  KernelParam p{offset, elem * count};
  offset += p.size;
  return p;
}

}  // namespace

namespace {

// What kernels_in_cubin and variables_in_cubin read: each kernel's .nv.info
// section and the symbol table.
struct CubinTables {
  std::map<std::string, std::span<const std::byte>> nv_info;
  std::vector<std::pair<std::string, Elf64_Sym>> symbols;
};

CubinTables read_cubin(std::span<const std::byte> elf) {
  auto eh = read_at<Elf64_Ehdr>(elf, 0);
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64)
    throw FormatError("cubin is not a 64-bit ELF");
  if (eh.e_shentsize != sizeof(Elf64_Shdr)) throw FormatError("cubin section header size");
  std::vector<Elf64_Shdr> sections(eh.e_shnum);
  for (size_t i = 0; i < sections.size(); ++i)
    sections[i] = read_at<Elf64_Shdr>(elf, eh.e_shoff + i * sizeof(Elf64_Shdr));
  if (eh.e_shstrndx >= sections.size()) throw FormatError("cubin section names missing");
  auto section = [&](const Elf64_Shdr& s) {
    if (s.sh_type == SHT_NOBITS) return std::span<const std::byte>();
    if (s.sh_offset > elf.size() || s.sh_size > elf.size() - s.sh_offset) throw FormatError("section past the cubin");
    return elf.subspan(s.sh_offset, s.sh_size);
  };
  auto names = section(sections[eh.e_shstrndx]);
  CubinTables t;
  for (const auto& s : sections) {
    std::string name = c_string(names, s.sh_name);
    if (name.starts_with(".nv.info.")) t.nv_info[name.substr(9)] = section(s);
    if (s.sh_type != SHT_SYMTAB) continue;
    if (s.sh_link >= sections.size()) throw FormatError("symbol table without strings");
    auto syms = section(s);
    auto strs = section(sections[s.sh_link]);
    for (uint64_t off = 0; off + sizeof(Elf64_Sym) <= syms.size(); off += sizeof(Elf64_Sym)) {
      auto sym = read_at<Elf64_Sym>(syms, off);
      t.symbols.emplace_back(c_string(strs, sym.st_name), sym);
    }
  }
  return t;
}

}  // namespace

std::vector<KernelInfo> kernels_in_cubin(std::span<const std::byte> elf) {
  CubinTables t = read_cubin(elf);
  // A kernel without parameters has no KPARAM_INFO records (and may lack
  // .nv.info.<name> altogether): the entry symbol is what makes it a kernel.
  std::vector<KernelInfo> out;
  for (const auto& [name, sym] : t.symbols) {
    if (ELF64_ST_TYPE(sym.st_info) != STT_FUNC || !(sym.st_other & kStoCudaEntry)) continue;
    auto it = t.nv_info.find(name);
    out.push_back({name, it == t.nv_info.end() ? std::vector<KernelParam>{} : params_from_nv_info(it->second)});
  }
  return out;
}

std::map<std::string, size_t> variables_in_cubin(std::span<const std::byte> elf) {
  std::map<std::string, size_t> out;
  for (const auto& [name, sym] : read_cubin(elf).symbols)
    if (ELF64_ST_TYPE(sym.st_info) == STT_OBJECT && sym.st_size) out[name] = sym.st_size;
  return out;
}

std::set<std::string> managed_variables_in_cubin(std::span<const std::byte> elf) {
  constexpr unsigned char kStoCudaManaged = 0x4;  // seen in nvcc 13 cubins
  std::set<std::string> out;
  for (const auto& [name, sym] : read_cubin(elf).symbols)
    if (ELF64_ST_TYPE(sym.st_info) == STT_OBJECT && (sym.st_other & kStoCudaManaged)) out.insert(name);
  return out;
}

std::set<std::string> managed_variables_in(const FatBinary& fb) {
  std::set<std::string> out;
  for (const auto& e : fb.entries)
    if (e.kind == EntryKind::elf) out.merge(managed_variables_in_cubin(e.image));
  return out;
}

std::map<std::string, size_t> variables_in(const FatBinary& fb) {
  std::map<std::string, size_t> out;
  for (const auto& e : fb.entries)
    if (e.kind == EntryKind::elf) out.merge(variables_in_cubin(e.image));
  return out;
}

std::vector<KernelInfo> kernels_in_ptx(std::string_view ptx_text) {
  std::string ptx = strip_comments(ptx_text.substr(0, ptx_text.find('\0')));
  std::vector<KernelInfo> out;
  constexpr std::string_view kEntry = ".entry";
  for (size_t at = ptx.find(kEntry); at != ptx.npos; at = ptx.find(kEntry, at + kEntry.size())) {
    size_t i = at + kEntry.size();
    if ((at > 0 && ident_char(ptx[at - 1])) || i == ptx.size() || !space(ptx[i])) continue;  // in a longer word
    while (i < ptx.size() && space(ptx[i])) ++i;
    size_t name_begin = i;
    while (i < ptx.size() && ident_char(ptx[i])) ++i;
    KernelInfo k{ptx.substr(name_begin, i - name_begin), {}};
    while (i < ptx.size() && space(ptx[i])) ++i;
    if (k.name.empty() || i == ptx.size() || ptx[i] != '(') throw FormatError("bad PTX .entry");
    size_t close = ptx.find(')', i);
    if (close == ptx.npos) throw FormatError("unterminated PTX .entry parameter list");
    std::string_view list(ptx.data() + i + 1, close - i - 1);
    uint32_t offset = 0;
    while (!words(list).empty()) {
      size_t comma = list.find(',');
      k.params.push_back(ptx_param(list.substr(0, comma), offset));
      list = comma == list.npos ? std::string_view() : list.substr(comma + 1);
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
