#include <gtest/gtest.h>

#include <set>

#include "inferscope/workload/prompt.h"
#include "test_util.h"

namespace inferscope::workload {
namespace {

TEST(PromptSynth, ExactCountsUnderSim) {
  SimTextTokenizer tok;
  PromptSynth s(tok, 42);
  EXPECT_EQ(s.words().size(), 128u);
  EXPECT_EQ(s.marker_words(), 6);  // 7 bits per word, 40 bits of marker
  for (int n : {1, 2, 5, 6, 7, 100, 512, 2048}) {
    const auto b = s.build("", 1, "", n);
    EXPECT_EQ(b.tokens, n);
    EXPECT_EQ(tok.count(b.text), n);
  }
}

TEST(PromptSynth, ExactCountsUnderGpt2WithInstruction) {
  const auto tok = load_hf_tokenizer(testing::shared_path("tokenizers/gpt2/tokenizer.json"));
  PromptSynth s(*tok, 1);
  for (int n : {1, 3, 9, 10, 64, 1000}) {
    const auto b = s.build("", 17, " Summarize the following document.", n);
    EXPECT_EQ(tok->count(b.text), n) << n;
  }
  // The instruction is kept when it fits (5 tokens + 6 marker words <= 30).
  EXPECT_NE(s.build("", 17, " Summarize the following document.", 30).text.find("Summarize"), std::string::npos);
  EXPECT_EQ(s.build("", 17, " Summarize the following document.", 8).text.find("Summarize"), std::string::npos);
}

TEST(PromptSynth, DeterministicAndUnique) {
  SimTextTokenizer tok;
  PromptSynth a(tok, 5), b(tok, 5), c(tok, 6);
  EXPECT_EQ(a.build("", 9, "", 50).text, b.build("", 9, "", 50).text);
  EXPECT_NE(a.build("", 9, "", 50).text, c.build("", 9, "", 50).text);
  // Markers of 5000 consecutive indices are pairwise distinct, and so are the first
  // 16-token blocks of the prompts.
  std::set<std::string> markers, heads;
  for (std::uint64_t i = 0; i < 5000; ++i) {
    markers.insert(a.marker(i, 100));
    const auto t = a.build("", i, "", 64).text;
    const auto ids = tok.encode(t);
    heads.insert(std::string(reinterpret_cast<const char*>(ids.data()), 16 * sizeof(TokenId)));
  }
  EXPECT_EQ(markers.size(), 5000u);
  EXPECT_EQ(heads.size(), 5000u);
}

TEST(PromptSynth, SharedHeadAndBlocks) {
  SimTextTokenizer tok;
  PromptSynth s(tok, 3);
  const std::string head = s.block(77, 32);
  EXPECT_EQ(tok.count(head), 32);
  EXPECT_EQ(s.block(77, 10), s.block(77, 32).substr(0, s.block(77, 10).size()));  // prefix property
  EXPECT_NE(s.block(77, 32), s.block(78, 32));
  const auto p1 = s.build(head, 1, "", 100), p2 = s.build(head, 2, "", 100);
  EXPECT_EQ(p1.tokens, 100);
  EXPECT_EQ(p1.text.substr(0, head.size()), head);
  EXPECT_EQ(p2.text.substr(0, head.size()), head);
  EXPECT_NE(p1.text, p2.text);
  // A head longer than the target is kept whole; the result says how long it is.
  EXPECT_EQ(s.build(head, 1, "", 10).tokens, 32);
}

}  // namespace
}  // namespace inferscope::workload
