#pragma once
// The lab's report writer: each function turns one section's measurements (section_data.h) into its paragraphs,
// tables, plots, report.json object and console summary (lab_report.h). They read nothing but their argument, so a
// hand-made struct renders exactly as a measured one. Each writes in the language asked for
// (report_language.h); the numbers and the JSON are the same in every language.
#include "lab/lab_report.h"
#include "lab/report_language.h"
#include "lab/section_data.h"

namespace minigen::lab {

ReportSection cache_equivalence_report(const CacheEquivalenceData& data, Language language = Language::kEnglish);  // 1
ReportSection forward_tokens_report(const ForwardTokensData& data, Language language = Language::kEnglish);        // 2
ReportSection timing_report(const TimingData& data, Language language = Language::kEnglish);                       // 3
ReportSection cache_bytes_report(const CacheBytesData& data, Language language = Language::kEnglish);              // 4
ReportSection temperature_report(const TemperatureData& data, Language language = Language::kEnglish);             // 5
ReportSection top_p_report(const TopPData& data, Language language = Language::kEnglish);                          // 6
ReportSection eos_padding_report(const EosPaddingData& data, Language language = Language::kEnglish);              // 7
ReportSection seed_report(const SeedData& data, Language language = Language::kEnglish);                           // 8
ReportSection shrinking_report(const ShrinkingData& data, Language language = Language::kEnglish);                 // 9
ReportSection constraining_report(const ConstrainingData& data, Language language = Language::kEnglish);           // 10
ReportSection adapters_report(const AdaptersData& data, Language language = Language::kEnglish);                   // 11

}  // namespace minigen::lab
