#include <gtest/gtest.h>
#include <sentencepiece_trainer.h>
#include <unistd.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <fstream>

#include "inferscope/core/errors.h"
#include "inferscope/core/sim_tokenizer.h"
#include "inferscope/workload/prompt.h"
#include "inferscope/workload/tokenizer.h"
#include "test_util.h"

namespace inferscope::workload {
namespace {
using testing::data_path;
using testing::shared_path;
using testing::slurp;
using Ids = std::vector<TokenId>;

std::vector<std::string> split_cases(const std::string& s, const std::string& sep) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (true) {
    const auto f = s.find(sep, pos);
    if (f == std::string::npos) {
      out.push_back(s.substr(pos));
      break;
    }
    out.push_back(s.substr(pos, f - pos));
    pos = f + sep.size();
  }
  return out;
}

Ids parse_ids(const std::string& line) {
  Ids v;
  std::istringstream is(line);
  TokenId x;
  while (is >> x) v.push_back(x);
  return v;
}

TEST(SimTextTokenizer, WordsWithLeadingSpaces) {
  SimTextTokenizer t;
  EXPECT_EQ(t.count(""), 0);
  EXPECT_EQ(t.count("   "), 0);
  EXPECT_EQ(t.count("hello  world\tagain\n"), 3);
  const auto ids = t.encode(" the  model");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(ids[0], SimTokenizer::token_id(" the"));
  EXPECT_EQ(ids[1], SimTokenizer::token_id("  model"));
  EXPECT_FALSE(t.decode(ids).has_value());
}

TEST(HfBpe, Gpt2MatchesHuggingFaceOnEveryCase) {
  const auto tok = load_hf_tokenizer(shared_path("tokenizers/gpt2/tokenizer.json"));
  const auto texts = split_cases(slurp(shared_path("tokenizers/gpt2/cases.inp")), "\n__ggml_vocab_test__\n");
  const auto outs = split_cases(slurp(shared_path("tokenizers/gpt2/cases.out")), "\n");
  ASSERT_EQ(texts.size(), 47u);
  ASSERT_EQ(outs.size(), texts.size());
  int checked = 0;
  for (std::size_t i = 0; i < texts.size(); ++i) {
    const Ids expected = parse_ids(outs[i]);
    EXPECT_EQ(tok->encode(texts[i]), expected) << "case " << i << ": '" << texts[i] << "'";
    // Byte-level BPE is lossless: decoding gives the text back.
    EXPECT_EQ(tok->decode(expected).value_or("<error>"), texts[i]) << "case " << i;
    ++checked;
  }
  EXPECT_EQ(checked, 47);
}

TEST(HfBpe, Gpt2SpecialTokenAndCount) {
  const auto tok = load_hf_tokenizer(shared_path("tokenizers/gpt2/tokenizer.json"));
  // "Hello world" is [15496, 995] (case 12 of the vectors); the special token splits out.
  EXPECT_EQ(tok->encode("Hello world<|endoftext|>Hello world"), (Ids{15496, 995, 50256, 15496, 995}));
  EXPECT_EQ(tok->count("Hello world"), 2);
  EXPECT_FALSE(tok->decode(Ids{60000}).has_value());
}

TEST(HfBpe, TinyTokenizerMergesByRank) {
  const auto tok = load_hf_tokenizer(data_path("tiny_bpe.json"));
  // Worked by hand (docs in tests/data/workload/README.md): ids 0..255 are the bytes,
  // merges Ġt=256, he=257, Ġthe=258, 12=259, ĠĠ=260, <|eot|>=261.
  EXPECT_EQ(tok->encode("the  the 123<|eot|>x"), (Ids{116, 257, 32, 258, 32, 259, 51, 261, 120}));
  EXPECT_EQ(tok->encode("a   b"), (Ids{97, 260, 32, 98}));           // runs of spaces
  EXPECT_EQ(tok->encode("12345"), (Ids{259, 51, 52, 53}));           // digits: one piece
  EXPECT_EQ(tok->encode("\xc3\xa9"), (Ids{195, 169}));               // é as bytes
  EXPECT_EQ(tok->encode("\xf0\x9f\x98\x80"), (Ids{240, 159, 152, 128}));  // emoji
  EXPECT_EQ(tok->encode("\n\n"), (Ids{10, 10}));
  EXPECT_EQ(tok->encode("xyz"), (Ids{120, 121, 122}));  // no merge reaches "xyz"
  EXPECT_EQ(tok->decode(Ids{258, 261, 260}).value(), " the<|eot|>  ");
}

TEST(HfBpe, SplitPreTokenizerAndIgnoreMerges) {
  const auto tok = load_hf_tokenizer(data_path("tiny_bpe_split.json"));
  EXPECT_EQ(tok->encode("12345"), (Ids{259, 51, 52, 53}));  // \p{N}{1,3}: "123" "45"
  EXPECT_EQ(tok->encode("xyz"), (Ids{262}));                // ignore_merges: whole word in vocab
  EXPECT_EQ(tok->encode(" the"), (Ids{258}));
}

TEST(HfBpe, InvalidUtf8StillEncodesEveryByte) {
  const auto tok = load_hf_tokenizer(data_path("tiny_bpe.json"));
  const std::string bad = "a\xff\xfe b";
  const auto ids = tok->encode(bad);
  EXPECT_EQ(tok->decode(ids).value(), bad);
}

TEST(HfBpe, BadFilesAreInputErrors) {
  EXPECT_THROW(load_hf_tokenizer(data_path("missing.json")), InputError);
  EXPECT_THROW(load_hf_tokenizer_from_json("{not json", "x.json"), InputError);
  EXPECT_THROW(load_hf_tokenizer_from_json(R"({"model":{"type":"WordPiece","vocab":{}}})", "x.json"), InputError);
  EXPECT_THROW(load_hf_tokenizer_from_json(R"({"model":{"type":"BPE","vocab":{"a":0},"merges":["a b"]},
                                              "pre_tokenizer":{"type":"ByteLevel"}})", "x.json"),
               InputError);
}

// SentencePiece: no Debian package ships a small .model file, so the test trains a tiny
// BPE model with libsentencepiece_train on text made of common words.
class SentencePieceTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = std::filesystem::temp_directory_path() / ("inferscope_sp_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    std::ofstream f(dir_ / "corpus.txt");
    const char* words[] = {"the", "model", "time", "load", "user", "text", "block", "page", "step", "layer",
                           "head", "weight", "memory", "peak", "rate", "trace", "tail", "fast", "slow", "warm",
                           "cold", "long", "short", "input", "output", "scale", "zero", "one", "two", "three",
                           "four", "five", "six", "seven", "eight", "nine", "ten", "alpha", "beta", "gamma"};
    for (int line = 0; line < 400; ++line) {
      for (int w = 0; w < 12; ++w) f << words[(line * 7 + w * 13) % 40] << ' ';
      f << "\n";
    }
    f.close();
    const auto st = sentencepiece::SentencePieceTrainer::Train(
        "--input=" + (dir_ / "corpus.txt").string() + " --model_prefix=" + (dir_ / "sp").string() +
        " --vocab_size=200 --model_type=bpe --character_coverage=1.0 --minloglevel=2");
    ASSERT_TRUE(st.ok()) << st.ToString();
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::filesystem::path dir_;
};
std::filesystem::path SentencePieceTest::dir_;

TEST_F(SentencePieceTest, EncodeDecodeAndExactPrompts) {
  const auto tok = load_tokenizer((dir_ / "sp.model").string());
  EXPECT_EQ(tok->name().rfind("sentencepiece:", 0), 0u);
  const auto ids = tok->encode("the model time");
  EXPECT_EQ(ids.size(), 3u);  // whole words are pieces after training on them
  EXPECT_EQ(tok->decode(ids).value(), "the model time");
  PromptSynth synth(*tok, 7);
  for (int n : {1, 5, 17, 100}) EXPECT_EQ(tok->count(synth.build("", 3, "", n).text), n) << n;
  EXPECT_THROW(load_sentencepiece_from_bytes("garbage", "g.model"), InputError);
}

TEST(ServerTokenizer, ParsesEveryEngineFormat) {
  EXPECT_EQ(parse_tokenize_response(R"({"count":3,"max_model_len":4096,"tokens":[1,2,3]})").value(), (Ids{1, 2, 3}));
  // llama.cpp, recorded (shared/data/llamacpp/tokenize*.txt).
  EXPECT_EQ(parse_tokenize_response(slurp(shared_path("llamacpp/tokenize.txt"))).value(),
            (Ids{450, 4996, 17354, 1701, 29916, 432, 17204, 975, 278, 17366, 11203, 29889}));
  EXPECT_EQ(parse_tokenize_response(slurp(shared_path("llamacpp/tokenize_pieces.txt"))).value(),
            (Ids{1, 450, 4996, 17354, 1701, 29916}));
  EXPECT_EQ(parse_tokenize_response(R"([{"id":5,"text":"a","start":0,"stop":1},{"id":9,"text":"b","start":1,"stop":2}])").value(),
            (Ids{5, 9}));
  EXPECT_FALSE(parse_tokenize_response("nope").has_value());
  EXPECT_FALSE(parse_tokenize_response(R"({"count":2,"tokens":[1]})").has_value());
  EXPECT_FALSE(parse_tokenize_response(R"({"error":{"message":"x"}})").has_value());
}

TEST(ServerTokenizer, PostsToTheUrlAndCountsTokens) {
  std::vector<std::pair<std::string, std::string>> calls;
  TokenizerLoadOptions opt;
  opt.post = [&](const std::string& url, const std::string& body) -> std::expected<HttpReply, std::string> {
    calls.emplace_back(url, body);
    return HttpReply{200, R"({"count":2,"tokens":[7,8]})"};
  };
  const auto tok = load_tokenizer("http://127.0.0.1:8000", opt);
  EXPECT_EQ(tok->count("hello there"), 2);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].first, "http://127.0.0.1:8000/tokenize");
  const auto body = nlohmann::json::parse(calls[0].second);
  EXPECT_EQ(body["prompt"], "hello there");
  EXPECT_EQ(body["content"], "hello there");
  EXPECT_EQ(body["add_special_tokens"], false);

  opt.post = [](const std::string&, const std::string&) -> std::expected<HttpReply, std::string> {
    return HttpReply{500, "boom"};
  };
  const auto bad = load_tokenizer("http://127.0.0.1:8000/v1/tokenize", opt);
  EXPECT_THROW(bad->count("x"), InputError);
  EXPECT_EQ(nlohmann::json::parse(tokenize_request_body("x", TokenizeDialect::tgi)), nlohmann::json({{"inputs", "x"}}));
}

TEST(ServerTokenizer, ExactPromptsThroughTokenize) {
  // A fake engine whose /tokenize is the sim tokenizer: prompts verified over "HTTP".
  int calls = 0;
  TokenizerLoadOptions opt;
  opt.post = [&](const std::string&, const std::string& body) -> std::expected<HttpReply, std::string> {
    ++calls;
    const auto ids = SimTextTokenizer{}.encode(nlohmann::json::parse(body)["prompt"].get<std::string>());
    return HttpReply{200, nlohmann::json({{"count", ids.size()}, {"tokens", ids}}).dump()};
  };
  const auto tok = load_tokenizer("http://127.0.0.1:8000", opt);
  PromptSynth synth(*tok, 1);
  EXPECT_EQ(calls, 1);  // every candidate word is one token: one call decides the word set
  const auto b = synth.build("", 5, "", 300);
  EXPECT_EQ(b.tokens, 300);
  EXPECT_EQ(SimTextTokenizer{}.count(b.text), 300);
  EXPECT_EQ(calls, 2);  // the filler is additive: one verifying count
}

TEST(LoadTokenizer, Dispatch) {
  EXPECT_EQ(load_tokenizer("sim")->name(), "sim");
  EXPECT_EQ(load_tokenizer("")->name(), "sim");
  EXPECT_EQ(load_tokenizer(shared_path("tokenizers/gpt2"))->count("Hello world"), 2);  // a directory
  EXPECT_THROW(load_tokenizer("/nonexistent/tokenizer.json"), InputError);
  TokenizerLoadOptions opt;
  opt.get = [](const std::string&) -> std::expected<HttpReply, std::string> {
    return HttpReply{200, slurp(data_path("tiny_bpe.json"))};
  };
  EXPECT_EQ(load_tokenizer("http://127.0.0.1:9/tiny/tokenizer.json", opt)->encode(" the"), (Ids{258}));
}

}  // namespace
}  // namespace inferscope::workload
