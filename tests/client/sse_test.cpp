#include "inferscope/client/sse.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace inferscope {
namespace {

struct Collected {
  std::vector<SseEvent> events;
  SseParser parser{[this](const SseEvent& e) { events.push_back(e); }};
};

std::vector<SseEvent> parse_all(std::string_view body, bool finish = true) {
  Collected c;
  c.parser.feed(body);
  if (finish) c.parser.finish();
  return c.events;
}

void expect_same(const std::vector<SseEvent>& a, const std::vector<SseEvent>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].field, b[i].field) << i;
    EXPECT_EQ(a[i].event, b[i].event) << i;
    EXPECT_EQ(a[i].data, b[i].data) << i;
  }
}

TEST(SseParser, DataWithAndWithoutSpace) {
  const auto ev = parse_all("data: {\"a\":1}\n\ndata:{\"b\":2}\n\ndata:  two spaces\n\n");
  ASSERT_EQ(ev.size(), 3u);
  EXPECT_EQ(ev[0].field, "data");
  EXPECT_EQ(ev[0].data, "{\"a\":1}");
  EXPECT_EQ(ev[1].data, "{\"b\":2}");
  EXPECT_EQ(ev[2].data, " two spaces");  // only one leading space is removed
}

TEST(SseParser, LineEndingsLfCrlfCr) {
  const auto lf = parse_all("data: a\n\ndata: b\nevent: x\n\n");
  const auto crlf = parse_all("data: a\r\n\r\ndata: b\r\nevent: x\r\n\r\n");
  const auto cr = parse_all("data: a\r\rdata: b\revent: x\r\r");
  ASSERT_EQ(lf.size(), 2u);
  EXPECT_EQ(lf[1].event, "x");
  expect_same(lf, crlf);
  expect_same(lf, cr);
}

TEST(SseParser, CommentsIdRetryAndUnknownFieldsIgnored) {
  const auto ev = parse_all(": keep-alive\n\nid: 7\nretry: 100\nfoo: bar\ndata: x\n\n:ping\n\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "x");
}

TEST(SseParser, MultiLineDataJoinedWithNewline) {
  const auto ev = parse_all("data: first\ndata: second\ndata\n\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "first\nsecond\n");  // a bare `data` line appends an empty line
}

TEST(SseParser, EventTypeResetsAfterDispatch) {
  const auto ev = parse_all("event: error\ndata: {}\n\ndata: {}\n\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[0].event, "error");
  EXPECT_EQ(ev[1].event, "");
}

TEST(SseParser, BareErrorLineIsItsOwnEvent) {
  const auto ev =
      parse_all("data: {\"content\":\"a\"}\n\nerror: {\"code\":500,\"message\":\"boom\"}\n\n");
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].field, "error");
  EXPECT_EQ(ev[1].data, "{\"code\":500,\"message\":\"boom\"}");
  // Directly after a data line without a blank line between, both are still delivered.
  const auto ev2 = parse_all("data: x\nerror: {}\n\n");
  ASSERT_EQ(ev2.size(), 2u);
  EXPECT_EQ(ev2[0].field, "data");
  EXPECT_EQ(ev2[1].field, "error");
}

TEST(SseParser, FinalEventWithoutBlankLineDeliveredOnFinish) {
  Collected c;
  c.parser.feed("data: a\n\ndata: last");
  EXPECT_EQ(c.events.size(), 1u);
  EXPECT_EQ(c.parser.buffered(), 10u);  // "data: last" waits for its line end
  c.parser.finish();
  ASSERT_EQ(c.events.size(), 2u);
  EXPECT_EQ(c.events[1].data, "last");
  // With a line end but no blank line.
  const auto ev = parse_all("data: x\n");
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].data, "x");
  EXPECT_TRUE(parse_all("data: x\n", false).empty());
}

TEST(SseParser, EveryTwoWaySplitGivesTheSameEvents) {
  const std::string body =
      "data: {\"t\":\"caf\xc3\xa9\"}\r\n\r\n: c\r\nevent: e\r\ndata: a\r\ndata: b\r\n\r\n"
      "data:x\rdata:y\r\rerror: {}\n\ndata: z";
  const auto whole = parse_all(body);
  ASSERT_EQ(whole.size(), 5u);
  for (std::size_t k = 1; k < body.size(); ++k) {
    for (std::size_t m = k; m < body.size(); m += 7) {  // and a third piece
      Collected c;
      c.parser.feed(std::string_view(body).substr(0, k));
      c.parser.feed(std::string_view(body).substr(k, m - k));
      c.parser.feed(std::string_view(body).substr(m));
      c.parser.finish();
      SCOPED_TRACE(k);
      expect_same(whole, c.events);
    }
  }
}

TEST(SseParser, ByteByByteCrlfSplitBetweenCrAndLf) {
  const std::string body = "data: a\r\n\r\ndata: b\r\n\r\n";
  Collected c;
  for (char ch : body) c.parser.feed(std::string_view(&ch, 1));
  ASSERT_EQ(c.events.size(), 2u);  // CR then LF in separate reads is one line end
  EXPECT_EQ(c.events[0].data, "a");
  EXPECT_EQ(c.events[1].data, "b");
}

TEST(SseParser, OverlongLineFailsAndStops) {
  Collected c;
  const std::string chunk(1024 * 1024, 'x');
  c.parser.feed("data: ");
  for (int i = 0; i < 16 && !c.parser.failed(); ++i) c.parser.feed(chunk);
  EXPECT_TRUE(c.parser.failed());
  EXPECT_EQ(c.parser.buffered(), 0u);  // memory released
  c.parser.feed("\n\ndata: later\n\n");
  c.parser.finish();
  EXPECT_TRUE(c.events.empty());
}

TEST(SseParser, OverlongEventOfManyLinesFails) {
  Collected c;
  const std::string line = "data: " + std::string(1024 * 1024, 'y') + "\n";
  for (int i = 0; i < 17 && !c.parser.failed(); ++i) c.parser.feed(line);
  EXPECT_TRUE(c.parser.failed());
  EXPECT_TRUE(c.events.empty());
}

}  // namespace
}  // namespace inferscope
