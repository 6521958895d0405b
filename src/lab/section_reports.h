#pragma once
// The lab's report writer: each function turns one section's measurements (section_data.h) into its paragraphs,
// tables, plots, report.json object and console summary (lab_report.h). They read nothing but their argument, so a
// hand-made struct renders exactly as a measured one.
#include "lab/lab_report.h"
#include "lab/section_data.h"

namespace minigen::lab {

ReportSection cache_equivalence_report(const CacheEquivalenceData& data);  // 1
ReportSection forward_tokens_report(const ForwardTokensData& data);        // 2
ReportSection timing_report(const TimingData& data);                       // 3
ReportSection cache_bytes_report(const CacheBytesData& data);              // 4
ReportSection temperature_report(const TemperatureData& data);             // 5
ReportSection top_p_report(const TopPData& data);                          // 6
ReportSection eos_padding_report(const EosPaddingData& data);              // 7
ReportSection seed_report(const SeedData& data);                           // 8
ReportSection shrinking_report(const ShrinkingData& data);                 // 9
ReportSection constraining_report(const ConstrainingData& data);           // 10

}  // namespace minigen::lab
