// The streaming CSV reader: `CsvTable::read(path, choose)` reads a file through a buffer of
// `chunk_bytes` and keeps only the columns the chooser names, the numeric ones as numbers
// (csv.hpp's header comment has the contract). The buffer is cut after the last complete record
// it holds (a line break outside quotes); the rest moves to the buffer's front and the next read
// appends to it, so every record is split whole by the reader's own `split_records`.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <system_error>
#include <thread>

#include "blr/core/error.hpp"
#include "blr/io/csv.hpp"
#include "csv_detail.hpp"

namespace blr::io {
namespace {

/// The end of the last complete record in p[0, n), a text that starts a record and goes on past
/// n: the position after the last line break outside quotes, or 0 when there is none. A CR as the
/// last byte is not an end (an LF may follow it). A text without quotes is searched from its end.
std::size_t complete_records_end(const char* p, std::size_t n) {
  if (n == 0) return 0;
  if (std::memchr(p, '"', n) == nullptr) {
    for (std::size_t i = n; i-- > 0;) {
      if (p[i] == '\n') return i + 1;
      if (p[i] == '\r' && i + 1 < n) return i + 1;
    }
    return 0;
  }
  std::size_t end = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < n; ++i) {
    const char c = p[i];
    if (c == '"') {
      quoted = !quoted;
    } else if (!quoted && (c == '\n' || (c == '\r' && i + 1 < n && p[i + 1] != '\n'))) {
      end = i + 1;
    }
  }
  return end;
}

/// Buffers with at least this many number cells are parsed on up to one thread per core.
constexpr std::size_t kParallelCells = std::size_t{1} << 15;

}  // namespace

CsvTable::NumberBlock::NumberBlock(const NumberBlock& other) {
  reset(other.columns_, other.rows_);
  resize_rows(other.rows_);
  for (std::size_t c = 0; c < columns_; ++c) std::copy_n(other.column(c), rows_, column(c));
}

CsvTable::NumberBlock& CsvTable::NumberBlock::operator=(const NumberBlock& other) {
  if (this != &other) *this = NumberBlock(other);
  return *this;
}

void CsvTable::NumberBlock::reset(std::size_t columns, std::size_t capacity) {
  columns_ = columns;
  capacity_ = capacity;
  rows_ = 0;
  // Not value-initialised: the pages are first written by the parse, after the advice.
  data_.reset(columns * capacity > 0 ? new double[columns * capacity] : nullptr);
  if (data_) detail::advise_huge_pages(data_.get(), columns * capacity * sizeof(double));
}

void CsvTable::NumberBlock::resize_rows(std::size_t rows) {
  if (rows > capacity_) {
    // Half as much again (or what is asked): a capacity estimated too small grows a few times.
    NumberBlock bigger;
    bigger.reset(columns_, std::max(rows, capacity_ + capacity_ / 2));
    for (std::size_t c = 0; c < columns_; ++c) std::copy_n(column(c), rows_, bigger.column(c));
    *this = std::move(bigger);
  }
  rows_ = rows;
}

void CsvTable::parse_numbers(const std::vector<std::size_t>& firsts, const FieldText& field,
                             std::vector<bool>& has_text_cell,
                             std::vector<std::string>& text_cells_found) {
  if (firsts.empty() || numbers_.columns() == 0) return;
  const std::size_t m = firsts.size();
  const std::size_t row0 = lines_.size() - m;  // the buffer's first data row
  numbers_.resize_rows(row0 + m);              // rows row0.. are written below
  std::vector<std::size_t> columns;            // the file columns kept as numbers
  for (std::size_t j = 0; j < stored_.size(); ++j)
    if (stored_[j].kept == Kept::kNumbers) columns.push_back(j);
  // Each cell is parsed on its own, so the split of rows between threads changes nothing; each
  // part collects its missing cells (in row order) and text cells, merged in part order.
  struct Part {
    std::vector<std::vector<std::pair<Index, std::string>>> missing;
    std::vector<char> text;
  };
  const auto parse = [&](std::size_t begin, std::size_t end, Part& part) {
    part.missing.resize(numbers_.columns());
    part.text.assign(numbers_.columns(), 0);
    for (std::size_t r = begin; r < end; ++r) {
      for (const std::size_t j : columns) {
        const std::size_t slot = stored_[j].slot;
        const std::string_view cell = field(firsts[r] + j);
        // Unquoted cells come trimmed; a quoted one may hold spaces around its number.
        detail::Parsed p = detail::parse_decimal(cell);
        if (p.status != detail::NumberStatus::kOk) p = detail::parse_decimal(detail::trim(cell));
        if (p.status == detail::NumberStatus::kOk) {
          numbers_.column(slot)[row0 + r] = p.value;
          continue;
        }
        numbers_.column(slot)[row0 + r] = std::numeric_limits<double>::quiet_NaN();
        if (is_missing(cell)) {
          part.missing[slot].emplace_back(static_cast<Index>(row0 + r), std::string(cell));
        } else {
          part.text[slot] = 1;
        }
      }
    }
  };
  const std::size_t threads =
      m * columns.size() < kParallelCells
          ? 1
          : std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  std::vector<Part> parts(threads);
  {
    std::vector<std::jthread> workers;
    for (std::size_t i = 1; i < threads; ++i)
      workers.emplace_back(parse, m * i / threads, m * (i + 1) / threads, std::ref(parts[i]));
    parse(0, m / threads, parts[0]);
  }  // the workers join here
  for (const auto& part : parts) {
    for (const std::size_t j : columns) {
      const std::size_t slot = stored_[j].slot;
      auto& missing = missing_[slot];
      missing.insert(missing.end(), part.missing[slot].begin(), part.missing[slot].end());
      if (part.text[slot] && !has_text_cell[slot]) {
        has_text_cell[slot] = true;
        text_cells_found.push_back(header_[j]);
      }
    }
  }
}

void CsvTable::check_choice(const CsvColumns& chosen) const {
  for (const auto& name : chosen.numbers) column_index(name);
  for (const auto& name : chosen.text) {
    column_index(name);
    check(std::find(chosen.numbers.begin(), chosen.numbers.end(), name) == chosen.numbers.end(),
          fmt::format("Column '{}' of '{}' is asked for both as numbers and as text.", name,
                      source_));
  }
}

void CsvTable::keep_columns(const CsvColumns& chosen) {
  check_choice(chosen);
  stored_.assign(header_.size(), {Kept::kDropped, 0});
  std::size_t columns = 0;
  for (const auto& name : chosen.numbers) {
    Stored& s = stored_[static_cast<std::size_t>(column_index(name))];
    if (s.kept == Kept::kNumbers) continue;  // named twice
    s = {Kept::kNumbers, columns++};
  }
  numbers_.reset(columns, 0);
  missing_.assign(columns, {});
  for (const auto& name : chosen.text)
    stored_[static_cast<std::size_t>(column_index(name))].kept = Kept::kText;
  // The kept text columns take their slots in file order, as their cells come; their names are
  // their header record (kept text cell (r, c) is field width·(r + 1) + c).
  for (std::size_t j = 0; j < header_.size(); ++j) {
    if (stored_[j].kept != Kept::kText) continue;
    stored_[j].slot = width_++;
    text_ += header_[j];
    ends_.push_back(text_.size());
  }
}

CsvTable CsvTable::read(const std::string& path, const CsvColumnChooser& choose,
                        std::uintmax_t max_bytes, std::size_t chunk_bytes) {
  // A column chosen as numbers that holds a text cell is read again as text, at most twice more (a
  // file that changes between the passes may show new text cells once; a third time is refused, so
  // that no text cell is ever read as a number). What cannot be read twice (a pipe) is read whole,
  // every column as text.
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) {
    CsvTable t = read(path, max_bytes);
    t.check_choice(choose(t.columns()));
    return t;
  }
  std::vector<std::string> as_text;
  for (int pass = 0;; ++pass) {
    const CsvColumnChooser chooser = [&](const std::vector<std::string>& header) {
      CsvColumns c = choose(header);
      std::erase_if(c.numbers, [&](const std::string& name) {
        return std::find(as_text.begin(), as_text.end(), name) != as_text.end();
      });
      for (const auto& name : as_text) c.text.push_back(name);
      return c;
    };
    std::vector<std::string> found;
    CsvTable t = stream(path, chooser, max_bytes, chunk_bytes, found);
    if (found.empty()) return t;
    check(pass < 2, fmt::format("File '{}' changed while it was read: its column '{}' held text "
                                "in a pass after the ones that read it as numbers.",
                                path, found.front()));
    as_text.insert(as_text.end(), found.begin(), found.end());
  }
}

CsvTable CsvTable::stream(const std::string& path, const CsvColumnChooser& choose,
                          std::uintmax_t max_bytes, std::size_t chunk_bytes,
                          std::vector<std::string>& text_cells_found) {
  check(chunk_bytes > 0, "The CSV reader's buffer must hold at least one byte.");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("File '{}' cannot be opened for reading.", path));
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  if (!ec && size > max_bytes) {
    throw Error(
        fmt::format("File '{}' holds {} bytes, more than the {} bytes a CSV table may have.", path,
                    size, max_bytes));
  }
  CsvTable t;
  t.source_ = path;
  std::vector<bool> has_text_cell;  // per column kept as numbers
  bool header_seen = false;
  long line = 1;             // the line on which the buffer starts
  std::uintmax_t total = 0;  // bytes read so far
  std::string buffer;
  buffer.reserve(chunk_bytes + (chunk_bytes >> 4));  // room for a held record or two
  detail::advise_huge_pages(buffer.data(), buffer.capacity());
  std::size_t held = 0;  // bytes of the buffer not yet split
  bool at_end = false;
  bool file_start = true;  // the buffer starts the file (a byte-order mark may open it)
  while (!at_end) {
    // Append up to chunk_bytes after what is held; grow when a record is longer than the buffer.
    if (buffer.size() < held + chunk_bytes) buffer.resize(held + chunk_bytes);
    in.read(buffer.data() + held, static_cast<std::streamsize>(chunk_bytes));
    const auto got = static_cast<std::size_t>(in.gcount());
    if (in.bad()) throw Error(fmt::format("File '{}' cannot be read to its end.", path));
    at_end = got < chunk_bytes;
    total += got;
    if (total > max_bytes) {
      throw Error(fmt::format("File '{}' holds more than the {} bytes a CSV table may have.", path,
                              max_bytes));
    }
    const std::size_t n = held + got;
    // A NUL byte is not text: it would cut every sentence that quotes the cell and print raw.
    if (const void* nul = std::memchr(buffer.data() + held, '\0', got)) {
      detail::throw_nul_byte(
          path, buffer.data(),
          static_cast<std::size_t>(static_cast<const char*>(nul) - buffer.data()), line);
    }
    const std::size_t cut = at_end ? n : complete_records_end(buffer.data(), n);
    if (cut == 0 && !at_end) {  // no record is complete yet: read more behind it
      held = n;
      continue;
    }
    detail::Records records = detail::split_records(buffer.data(), cut, path, line, file_start);
    file_start = false;
    const FieldText field{buffer.data(), records.ends.data()};
    std::size_t k = 0;                // the record's first field
    std::vector<std::size_t> firsts;  // the first field of each data record of this buffer
    for (std::size_t r = 0; r < records.widths.size(); k += records.widths[r], ++r) {
      const std::size_t width = records.widths[r];
      if (!header_seen) {
        header_seen = true;
        for (std::size_t j = 0; j < width; ++j) t.header_.emplace_back(field(k + j));
        detail::check_header(t.header_, path, records.lines[r]);
        t.keep_columns(choose(t.header_));
        has_text_cell.assign(t.numbers_.columns(), false);
        if (!at_end && total > 0) {  // room for the rows this size of file will hold
          const double per_row =
              static_cast<double>(cut) /
              static_cast<double>(std::max<std::size_t>(records.widths.size(), 1));
          const auto expected =
              static_cast<std::size_t>(1.02 * static_cast<double>(ec ? total : size) /
                                       std::max(per_row, 1.0)) +
              16;
          t.numbers_.reset(t.numbers_.columns(), expected);
        }
        continue;
      }
      if (width != t.header_.size())
        detail::throw_malformed_row(path, records.lines[r], width, t.header_.size());
      for (std::size_t j = 0; j < width; ++j) {
        if (t.stored_[j].kept != Kept::kText) continue;
        t.text_ += field(k + j);
        t.ends_.push_back(t.text_.size());
      }
      firsts.push_back(k);
      t.lines_.push_back(records.lines[r]);
    }
    t.parse_numbers(firsts, field, has_text_cell, text_cells_found);
    line = records.next_line;
    // What follows the cut (a record not yet complete) moves to the front.
    held = n - cut;
    std::memmove(buffer.data(), buffer.data() + cut, held);
  }
  if (!header_seen) {
    throw Error(
        fmt::format("File '{}' is empty; a header row naming the columns is expected.", path));
  }
  if (t.lines_.empty()) throw Error(fmt::format("File '{}' has a header but no data rows.", path));
  return t;
}

}  // namespace blr::io
