#!/usr/bin/perl
# Checks the DOM that drive_page.pl wrote after a `?autotest=PROMPT` run of the web page.
#   check_page.pl result DOM PROMPT [REPETITION_PENALTY]
#                                     checks the page's result; prints the non-streaming API request that must give the
#                                     same text (temperature 0, the page's max_tokens, the penalty) as JSON on stdout;
#                                     with REPETITION_PENALTY, the page must have sent that value from its control
#   check_page.pl compare DOM API_RESPONSE
#                                     checks that the API's answer (choices[0].message.content) equals the page's text
#   check_page.pl structured DOM KEY  checks a `&schema=` run: the answer is a JSON object holding KEY, and the first
#                                     token's entry carries grammar_allowed
#   check_page.pl language DOM zh|en  the page's visible text is in that language: its labels there, none of the other
#   check_page.pl hover DOM zh|en     after drive_page.pl --hover: the inspector shows the hovered token's model
#                                     probability and kept-set probability, each labelled, equal to its logprobs entry
#   check_page.pl differs DOM OTHER_DOM
#                                     the two pages' answers differ (a control changed what the model wrote)
# Exits 1 with a message on the first failed check.
use strict;
use warnings;
use JSON::PP;

binmode(STDOUT, ':encoding(UTF-8)');
binmode(STDERR, ':encoding(UTF-8)');

sub fail { print STDERR "FAIL: $_[0]\n"; exit 1; }

sub slurp {
  my ($path) = @_;
  open(my $handle, '<:raw', $path) or fail("cannot read $path: $!");
  local $/;
  return <$handle>;
}

sub is_number { return defined $_[0] && !ref $_[0] && $_[0] =~ /\A-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\z/; }

# The page's result: the text of <pre id="autotest-result">, HTML-escaped by the serialiser.
sub page_result {
  my ($dom_path) = @_;
  my $dom = slurp($dom_path);
  $dom =~ /<body[^>]*\bdata-autotest="([^"]*)"/ or fail('the page never set data-autotest on <body>');
  my $state = $1;
  $dom =~ m{<pre id="autotest-result"[^>]*>(.*?)</pre>}s or fail('no element with id autotest-result in the page');
  my $text = $1;
  my %entities = (amp => '&', lt => '<', gt => '>', quot => '"', nbsp => "\xc2\xa0");
  $text =~ s/&(amp|lt|gt|quot|nbsp);/$entities{$1}/g;
  $text =~ s/&#(\d+);/my $c = chr($1); utf8::encode($c); $c/ge;
  my $result = eval { JSON::PP->new->utf8->decode($text) } or fail("autotest-result is not JSON: $text");
  fail("the page reported an error: $result->{error}") if $state eq 'error';
  fail("data-autotest is '$state', expected 'done'") unless $state eq 'done';
  return $result;
}

# The page's own visible text: the body without its scripts (page_strings.js holds both languages' strings), styles,
# the test's result, the turns' texts (the question and the model's English answer) and tags, entities decoded.
sub visible_text {
  my ($dom) = @_;
  $dom =~ s{<(script|style)\b.*?</\1>}{}gs;
  $dom =~ s{<pre id="autotest-result".*?</pre>}{}s;
  $dom =~ s{<div class="body">.*?</div>}{}gs;
  $dom =~ s{<[^>]*>}{ }g;
  my %entities = (amp => '&', lt => '<', gt => '>', quot => '"', nbsp => ' ', '#39' => "'");
  $dom =~ s/&(amp|lt|gt|quot|nbsp|#39);/$entities{$1}/g;
  utf8::decode($dom);
  $dom =~ s/\s+/ /g;
  return $dom;
}

# The labels each language must show, and a few of the other language's that must not be left: a page that forgot
# to translate a panel, or translated nothing, fails here.
my %labels = (
  zh => ['采样', '温度', '重复惩罚', '随机种子', '发送', '速度', '首个 token 时间（TTFT）', '解码速度', '新对话',
         '模型给所选 token 的概率：', '把鼠标移到一个 token 上（或点击它），看模型考虑过哪些候选', 'KV 缓存'],
  en => ['Sampling', 'temperature', 'repetition penalty', 'seed', 'Send', 'Speed', 'time to first token',
         'decode speed', 'New chat', "the model's probability of the chosen token:",
         'hover or click a token to see the candidates the model weighed', 'KV cache'],
);
my %inspector_labels = (
  zh => {raw => '模型给的概率（原始 logits 的 softmax，未经任何过滤）：',
         kept => '候选集合内的概率（温度、惩罚、top-k / top-p 之后重新归一化）：', title => ['模型概率', '候选集合内概率']},
  en => {raw => "the model's probability (softmax of the raw logits, before any filter): ",
         kept => 'in the kept set (after temperature, penalties, top-k / top-p, renormalised): ',
         title => ['model p', 'kept p']},
);

my ($mode, $dom_path, $argument, $extra) = @ARGV;
fail('usage: check_page.pl result DOM PROMPT [PENALTY] | compare DOM API_RESPONSE | structured DOM KEY | '
     . 'language DOM zh|en | hover DOM zh|en | differs DOM OTHER_DOM') unless defined $argument;
my $result = page_result($dom_path);

if ($mode eq 'result') {
  fail('the answer text is empty') unless defined $result->{text} && length $result->{text};
  fail('tokens is not a positive integer') unless ($result->{tokens} // '') =~ /\A[1-9]\d*\z/;
  my $candidates = $result->{first_token_candidates};
  fail('first_token_candidates is not a non-empty array') unless ref $candidates eq 'ARRAY' && @$candidates;
  for my $candidate (@$candidates) {
    my ($raw, $kept) = ($candidate->{raw_probability}, $candidate->{kept_probability});
    fail('a first-token candidate has no numeric raw_probability and kept_probability')
      unless is_number($raw) && is_number($kept);
    fail("a first-token raw probability is outside (0, 1]: $raw") unless $raw > 0 && $raw <= 1;
    fail("a first-token kept probability is outside [0, 1]: $kept") unless $kept >= 0 && $kept <= 1;
    fail('a first-token candidate has no token text') unless defined $candidate->{token};
  }
  fail('kept_candidates_first is not a positive integer') unless ($result->{kept_candidates_first} // '') =~ /\A[1-9]\d*\z/;
  for my $field ('ttft_ms', 'tokens_per_second') {
    fail("$field is not a positive number") unless is_number($result->{$field}) && $result->{$field} > 0;
  }
  fail('max_tokens is missing') unless ($result->{max_tokens} // '') =~ /\A[1-9]\d*\z/;
  printf STDERR "page: %d tokens, TTFT %.1f ms, %.1f tokens/s, first token %d kept candidates, top '%s' "
    . "model p = %.4f, kept p = %.4f\n", $result->{tokens}, $result->{ttft_ms}, $result->{tokens_per_second},
    $result->{kept_candidates_first}, $candidates->[0]{token}, $candidates->[0]{raw_probability},
    $candidates->[0]{kept_probability};
  print STDERR "page text: $result->{text}\n";
  my $penalty = $result->{repetition_penalty};
  fail('the page sent no numeric repetition_penalty') unless is_number($penalty);
  if (defined $extra) {
    fail("the page sent repetition_penalty $penalty, but its control was set to $extra") unless $penalty == $extra;
  } else {
    fail("the page sent repetition_penalty $penalty without being asked to (its default is 1)") unless $penalty == 1;
  }
  my $prompt = $argument;
  utf8::decode($prompt);
  print JSON::PP->new->canonical->encode({
    messages => [{role => 'user', content => $prompt}],
    temperature => 0,
    max_tokens => $result->{max_tokens} + 0,
    repetition_penalty => $penalty + 0,
  }), "\n";
} elsif ($mode eq 'compare') {
  my $response = eval { JSON::PP->new->utf8->decode(slurp($argument)) } or fail("the API answer is not JSON");
  my $api_text = $response->{choices}[0]{message}{content};
  fail('the API answer has no choices[0].message.content') unless defined $api_text;
  fail("the page's text differs from the API's greedy answer:\n  page: $result->{text}\n  api:  $api_text")
    unless $api_text eq $result->{text};
  print STDERR "api text:  identical\n";
} elsif ($mode eq 'structured') {
  # A `&schema=` run: the streamed answer is a JSON object with the schema's required key, and the first token's
  # logprobs entry says how many ids the grammar allowed.
  my $answer = eval { JSON::PP->new->utf8(0)->decode($result->{text}) };
  fail("the schema-constrained answer is not JSON: $result->{text}") unless ref $answer eq 'HASH';
  fail("the schema-constrained answer lacks the required key '$argument': $result->{text}")
    unless exists $answer->{$argument};
  fail('grammar_allowed_first is not a positive integer')
    unless ($result->{grammar_allowed_first} // '') =~ /\A[1-9]\d*\z/;
  print STDERR "page json: $result->{text} (first step: $result->{grammar_allowed_first} ids allowed)\n";
} elsif ($mode eq 'language') {
  my $dom = slurp($dom_path);
  my $want = $argument;
  my $other = $want eq 'zh' ? 'en' : 'zh';
  my $lang = $want eq 'zh' ? 'zh-CN' : 'en';
  fail("<html lang> is not '$lang'") unless $dom =~ /<html[^>]*\blang="\Q$lang\E"/;
  fail("the page reports language '$result->{language}', expected '$want'") unless ($result->{language} // '') eq $want;
  my $missing = $result->{missing_strings};
  fail('the page did not report its missing strings') unless ref $missing eq 'ARRAY';
  fail('page_strings.js lacks: ' . join(', ', @$missing)) if @$missing;
  my $text = visible_text($dom);
  for my $label (@{$labels{$want}}) {
    my $wanted = $label;
    utf8::decode($wanted);
    fail("the $want page does not show '$wanted'") unless index($text, $wanted) >= 0;
  }
  for my $label (@{$labels{$other}}) {
    my $unwanted = $label;
    utf8::decode($unwanted);
    fail("the $want page still shows the $other label '$unwanted'") if index($text, $unwanted) >= 0;
  }
  printf STDERR "page language: %s, %d labels shown, none of the %d %s ones\n", $want, scalar @{$labels{$want}},
    scalar @{$labels{$other}}, $other;
} elsif ($mode eq 'hover') {
  my $dom = slurp($dom_path);
  my $labels = $inspector_labels{$argument} or fail("no labels for language '$argument'");
  $dom =~ /<body[^>]*\bdata-hovered="([^"]*)"/ or fail('drive_page.pl --hover left no data-hovered on <body>');
  my $hovered_json = $1;
  $hovered_json =~ s/&quot;/"/g;
  $hovered_json =~ s/&amp;/&/g;
  my $hovered = JSON::PP->new->utf8->decode($hovered_json);
  $dom =~ m{<div id="inspector-body"[^>]*>(.*?)<table}s or fail('the inspector shows no token');
  my $inspector = $1;
  $inspector =~ /data-token-id="(\d+)"/ or fail('the inspector names no token id');
  fail("the inspector shows token $1, not the hovered $hovered->{token_id}") unless $1 == $hovered->{token_id};
  for my $kind ('raw', 'kept') {
    $inspector =~ m{<div class="probability" data-kind="$kind">(.*?)<b>([^<]*)</b></div>}s
      or fail("the inspector has no $kind probability line");
    my ($label, $shown) = ($1, $2);
    my $value = sprintf('%.2f %%', 100 * $hovered->{"${kind}_probability"});
    fail("the $kind line's label is '$label', expected '$labels->{$kind}'") unless $label eq $labels->{$kind};
    fail("the $kind line shows '$shown', the entry says $value") unless $shown eq $value;
  }
  fail('the two probabilities shown are the same number: nothing tells them apart')
    if sprintf('%.4f', $hovered->{raw_probability}) eq sprintf('%.4f', $hovered->{kept_probability});
  $dom =~ /<span class="chip[^"]*"[^>]*\btitle="([^"]*)"/ or fail('no token chip has a title (the native tooltip)');
  my $title = $1;
  for my $word (@{$labels->{title}}) {
    fail("the chip's tooltip '$title' lacks '$word'") unless index($title, $word) >= 0;
  }
  my ($raw_label, $kept_label) = ($labels->{raw}, $labels->{kept});
  utf8::decode($raw_label);
  utf8::decode($kept_label);
  printf STDERR "hover: token %d, %s%.2f %% and %s%.2f %%\n", $hovered->{token_id}, $raw_label,
    100 * $hovered->{raw_probability}, $kept_label, 100 * $hovered->{kept_probability};
} elsif ($mode eq 'differs') {
  my $other = page_result($argument);
  fail("both pages wrote the same answer: $result->{text}") if $result->{text} eq $other->{text};
  print STDERR "answers differ:\n  $result->{text}\n  $other->{text}\n";
} else {
  fail("unknown mode '$mode'");
}
