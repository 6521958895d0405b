#!/usr/bin/perl
# Checks the DOM that drive_page.pl wrote after a `?autotest=PROMPT` run of the web page.
#   check_page.pl result DOM PROMPT   checks the page's result; prints the non-streaming API request that must give the
#                                     same text (temperature 0, the page's max_tokens) as JSON on stdout
#   check_page.pl compare DOM API_RESPONSE
#                                     checks that the API's answer (choices[0].message.content) equals the page's text
#   check_page.pl structured DOM KEY  checks a `&schema=` run: the answer is a JSON object holding KEY, and the first
#                                     token's entry carries grammar_allowed
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

my ($mode, $dom_path, $argument) = @ARGV;
fail('usage: check_page.pl result DOM PROMPT | compare DOM API_RESPONSE') unless defined $argument;
my $result = page_result($dom_path);

if ($mode eq 'result') {
  fail('the answer text is empty') unless defined $result->{text} && length $result->{text};
  fail('tokens is not a positive integer') unless ($result->{tokens} // '') =~ /\A[1-9]\d*\z/;
  my $candidates = $result->{first_token_candidates};
  fail('first_token_candidates is not a non-empty array') unless ref $candidates eq 'ARRAY' && @$candidates;
  for my $candidate (@$candidates) {
    my $p = $candidate->{probability};
    fail('a first-token candidate has no numeric probability') unless is_number($p);
    fail("a first-token probability is outside (0, 1]: $p") unless $p > 0 && $p <= 1;
    fail('a first-token candidate has no token text') unless defined $candidate->{token};
  }
  fail('kept_candidates_first is not a positive integer') unless ($result->{kept_candidates_first} // '') =~ /\A[1-9]\d*\z/;
  for my $field ('ttft_ms', 'tokens_per_second') {
    fail("$field is not a positive number") unless is_number($result->{$field}) && $result->{$field} > 0;
  }
  fail('max_tokens is missing') unless ($result->{max_tokens} // '') =~ /\A[1-9]\d*\z/;
  printf STDERR "page: %d tokens, TTFT %.1f ms, %.1f tokens/s, first token %d kept candidates, top '%s' p = %.4f\n",
    $result->{tokens}, $result->{ttft_ms}, $result->{tokens_per_second}, $result->{kept_candidates_first},
    $candidates->[0]{token}, $candidates->[0]{probability};
  print STDERR "page text: $result->{text}\n";
  my $prompt = $argument;
  utf8::decode($prompt);
  print JSON::PP->new->canonical->encode({
    messages => [{role => 'user', content => $prompt}],
    temperature => 0,
    max_tokens => $result->{max_tokens} + 0,
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
} else {
  fail("unknown mode '$mode'");
}
