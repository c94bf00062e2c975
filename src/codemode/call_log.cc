#include "codemode/call_log.h"

#include <algorithm>

namespace airlock::codemode {

void CallLog::Add(CallRecord& rec) {
  std::lock_guard<std::mutex> lock(mu_);
  rec.seq = next_seq_++;
  if (records_.size() < max_records_) records_.push_back(rec);
}

void CallLog::Update(const CallRecord& rec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (rec.seq >= 1 && rec.seq <= records_.size()) {
    records_[rec.seq - 1] = rec;
  } else if (rec.decision == "denied") {
    ++unkept_denied_;
  }
}

std::vector<CallRecord> CallLog::records() const {
  std::lock_guard<std::mutex> lock(mu_);
  return records_;
}

uint32_t CallLog::total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return static_cast<uint32_t>(next_seq_ - 1);
}

uint32_t CallLog::denied() const {
  std::lock_guard<std::mutex> lock(mu_);
  return unkept_denied_ + static_cast<uint32_t>(std::count_if(records_.begin(), records_.end(), [](const CallRecord& c) {
           return c.decision == "denied";
         }));
}

}  // namespace airlock::codemode
