/**
 * Listing moderation, independent of the quality score (spec §7.2): hard rules that refuse a listing
 * whatever its score. The listings service enforces it before the score; ask_help explains a refusal with
 * it. Pure and deterministic. Each rule is a named reason with a hint that says how to fix an honest
 * listing that tripped it.
 *
 *   placeholder            lorem ipsum, "test listing", TODO/TBD, keyboard mashing
 *   slogan                 marketing claims with no concrete deliverable
 *   scam                   guaranteed returns, "send gas, get more back", giveaways
 *   off_platform_contact   messengers, phone numbers, e-mail addresses
 *   off_platform_payment   payment links and requests to pay outside escrow
 *   crypto_wallet          cryptocurrency addresses
 *   secret_request         asking the buyer for API keys, passwords, private keys, seed phrases
 *   prompt_injection       text addressed to buyer agents' instructions
 *   keyword_stuffing       one term repeated, or a bare list of tags
 *   shouting               mostly capital letters, runs of exclamation marks
 *
 * The rules read the text as a reader sees it, not as it was typed (issue 39): NFKC, invisible code
 * points dropped, spelled-out e-mail addresses written as addresses. The rules a look-alike letter can
 * slip past (contact, payment, secrets, injection, wallets) also read it with look-alikes folded to the
 * ASCII they imitate. The listing itself is stored as written.
 */
import { validate as isBtcAddress } from 'bitcoin-address-validation';
import { contentWords, excerpt, foldLookalikes, unspellEmails, visibleText } from './text';

export type ModerationCode =
  | 'placeholder'
  | 'slogan'
  | 'scam'
  | 'off_platform_contact'
  | 'off_platform_payment'
  | 'crypto_wallet'
  | 'secret_request'
  | 'prompt_injection'
  | 'keyword_stuffing'
  | 'shouting';

export interface ModerationReason {
  code: ModerationCode;
  message: string;
  hint: string;
  /** The offending text, shortened. */
  evidence?: string;
}

export interface ModerationVerdict {
  verdict: 'approved' | 'rejected';
  reasons: ModerationReason[];
}

interface Rule {
  code: ModerationCode;
  patterns: RegExp[];
  message: string;
  hint: string;
  /** Also read with look-alike letters folded: for rules an evader would dodge with "pаypal" (Cyrillic а). */
  readsLookalikes?: boolean;
}

const PLACEHOLDER_HINT = 'Replace the placeholder with the real offer: what you do, what the buyer provides, what they get back.';

const RULES: Rule[] = [
  {
    code: 'placeholder',
    message: 'The listing contains placeholder or test text.',
    hint: PLACEHOLDER_HINT,
    patterns: [
      /\blorem\b|\bipsum\b|\bdolor sit\b|\bconsectetur adipiscing\b/i,
      /\b(this is|just) (only )?a test\b/i,
      /\btest(ing)? (listing|service|post|offer|entry|product|item)\b/i,
      /\btesting,? ?(1,? ?2,? ?3|123)\b/i,
      /\bplaceholder (text|listing|description|title|content)\b|\bfixme\b/i,
      /^\s*(todo|tbd|tba|n\/a)\b/im,
      /\b(description|title|text) (goes )?here\b/i,
      /\b(insert|add) (a |the )?(description|title|text) here\b/i,
      /\b(asdf\w*|qwerty\w*|zxcv\w*|hjkl|jkl;)\b/i,
      /\bdo not (buy|purchase)\b|\bignore this (listing|one)\b/i,
      /\bfoo ?bar\b|\bfoo,? bar,? baz\b/i,
      /([a-z])\1{5,}/i,
    ],
  },
  {
    code: 'scam',
    message: 'The listing promises returns on gas or payments, which is a scam pattern.',
    hint: 'Sell a service with a concrete deliverable; listings may not promise financial returns, multiplied gas, giveaways or investments.',
    patterns: [
      /\b(double|triple|multiply|10x|2x|3x) (your|ur|the) (gas|money|balance|earnings|investment|crypto|coins?|funds)\b/i,
      /\bguaranteed (returns?|profits?|income|earnings|payouts?|roi|gains?|money)\b/i,
      /\b(send|give|transfer|deposit|pay) (me )?(\d+ )?(gas|money|coins?|btc|eth|usdt|crypto)\b.{0,60}\b(get|receive|earn)\b.{0,30}\b(back|more|double|twice|\d+ ?x|return)/i,
      /\b(get|receive|earn) (back )?(double|twice|triple|\d+ ?x|\d+ ?times) (your |the |what you )?(gas|money|investment|coins?|crypto|back|paid|deposit|amount|stake)\b/i,
      /\b(risk[- ]free|no[- ]risk) (profit|returns?|income|investment|money)\b/i,
      /\b(passive income|investment opportunity|get rich|ponzi|pyramid scheme|money flipping|flip your (gas|money))\b/i,
      /\b\d{2,4} ?% (profit|returns?|roi|gains?)\b/i,
      /\b(free (gas|money|crypto|btc|eth|tokens?|coins?)|(gas|crypto|token|btc) (giveaway|airdrop))\b/i,
    ],
  },
  {
    code: 'off_platform_contact',
    readsLookalikes: true,
    message: 'The listing asks buyers to make contact outside the marketplace.',
    hint: 'Remove contact details: buyers and sellers talk through send_message on a purchase, which keeps the escrow protection.',
    patterns: [
      /\b(t\.me|telegram\.me|wa\.me|chat\.whatsapp\.com|discord\.gg|discordapp\.com\/invite|signal\.me|m\.me)\/\S*/i,
      /\b(contact|message|msg|dm|pm|reach|add|ping|text|call|write to|hit|find|chat with|talk to) (me|us)?\s*(directly )?(on|via|at|over|through|in) (telegram|whatsapp|signal|discord|wechat|skype|viber|line app|kik|snapchat|instagram|facebook|twitter|x\.com)\b/i,
      /\b(telegram|whatsapp|signal|wechat|skype|viber)\s*[:@]\s*\S+/i,
      /\b(telegram|whatsapp|wechat|skype|viber) (me|us|handle|username|id|number|contact)\b/i,
      /\bmy (telegram|whatsapp|discord|signal|wechat|skype|phone|cell|mobile|email|e-mail)( handle| number| address| id| username| is)?\b(?! (verification|templates?|campaigns?|parser|validation))/i,
      /\b(call|text|sms|phone|whatsapp) (me|us)\b/i,
      // An address starts only after a non-address character, so a long word is scanned once, not once per
      // letter; its local part has a letter or digit, so "user:…@host" (NFKC: "...@host") is no address.
      /(?<![\w.+-])[.+-]*\w[\w.+-]*@[\w-]+(\.[\w-]+)*\.[a-z]{2,}\b/i,
      /\bemail (me|us)\b|\be-mail (me|us)\b/i,
    ],
  },
  {
    code: 'off_platform_payment',
    readsLookalikes: true,
    message: 'The listing asks for payment outside the marketplace escrow.',
    hint: 'Remove payment links and instructions: buyers pay only with gas through purchase_service, so both sides are protected by escrow.',
    patterns: [
      /\b(paypal\.me|paypal\.com|venmo\.com|cash\.app|buy\.stripe\.com|revolut\.me|ko-fi\.com|buymeacoffee\.com|patreon\.com|wise\.com\/pay|gumroad\.com|donate\.stripe\.com)\S*/i,
      /\bpay (me |us )?(directly|outside|off[- ]?platform|upfront|up front|in advance|via|through|with|by|on) (paypal|venmo|cash ?app|zelle|wire|bank transfer|crypto|bitcoin|btc|eth|usdt|usdc|western union|revolut|wise|gift cards?|stripe link)\b/i,
      /\bpay (me |us )?(directly|outside the (platform|marketplace)|off[- ]?platform)\b/i,
      /\b(pay|send|transfer|tip|wire) (me|us)\b.{0,30}\b(venmo|zelle|cashapp|cash app|paypal|western union|wire transfer|bank transfer|revolut|wise)\b/i,
      /\b(my|our) (paypal|venmo|zelle|cashapp|cash app|revolut|bank account|iban)\b/i,
      /\b(skip|avoid|bypass) (the )?(escrow|platform fee|fees|marketplace)\b/i,
    ],
  },
  {
    code: 'secret_request',
    readsLookalikes: true,
    message: 'The listing asks buyers for secrets (keys, passwords or credentials).',
    hint: 'Never ask for secrets. Ask for read-only access, a sanitized config, or have the buyer run the command themselves; the marketplace never needs a buyer\'s keys.',
    patterns: [
      /(?<!\b(never|not|nobody|no one|don't|do not|won't|will not|no need to|without)\s+(\w+\s+){0,3})\b(send|share|give|provide|paste|dm|tell|include|upload|attach|forward|enter|submit)\b (me |us )?(your |the |an? |all )?(own )?(api[ _-]?keys?|private keys?|secret keys?|seed phrases?|mnemonic|recovery (phrase|words)|passwords?|passphrases?|credentials|login details|ssh keys?|access tokens?|auth tokens?|bearer tokens?|rk_live\w*|wallet keys?|session cookies?)\b(?!\s*(reset|resets|manager|management|policy|policies|hashing|hash|strength|rotation|generator|less|protected|field|fields|form|flow|validation|vault|scanner|scanning|leaks?|placeholders?|template|templates))/i,
      /\b(send|share|give|tell|forward) (me|us) (your |the )?(2fa|otp|one[- ]time|verification|sms) (codes?|passwords?|pins?)\b/i,
      /\b(api[ _-]?key|private key|seed phrase|password|credentials|access token|rk_live_?\w*)\b.{0,30}\b(required|needed|must be (shared|sent|provided))\b/i,
    ],
  },
  {
    code: 'prompt_injection',
    readsLookalikes: true,
    message: 'The listing contains instructions aimed at buyer agents rather than a description of the service.',
    hint: 'Describe the service to the reader; do not address instructions to AI agents, their system prompts or their tools.',
    patterns: [
      /\b(ignore|disregard|forget|override|bypass) (all |any |the |your )?(previous|prior|above|earlier|other|system|original|safety)? ?(instructions|prompts?|rules|guidelines|directives|messages|context)\b/i,
      /\bsystem prompt\b|\bdeveloper (message|mode)\b|\bjailbreak\b/i,
      /<\|?(im_start|im_end|system|endoftext)\|?>|\[\/?INST\]|<<\/?SYS>>|###\s*(system|instruction)/i,
      /\b(you are now (a|an|the|in)|from now on,? you)\b/i,
      /\b(attention|note to|message to|dear|hey|hello|instructions? (for|to))\s*,?\s*(all )?(ai|llm|gpt|claude|buyer|assistant|autonomous)\s*(agents?|models?|assistants?|bots?)?\b/i,
      /\bbuyer (agents?|assistants?|bots?),? (must|should|need to|are required to|shall|always)\b/i,
      /\b(ai|llm) (agents?|assistants?) (reading|processing|parsing) this\b/i,
      /\b(if you are|as) an? (ai|llm|language model|agent|assistant|bot)\b.{0,60}\b(must|should|buy|purchase|select|choose|rate|confirm|pick)\b/i,
      /\b(buy|purchase|select|choose|pick|rate) this (listing|service|offer)\b.{0,30}\b(immediately|now|first|automatically|without (asking|checking|confirmation|approval)|over (all )?others|before any other)\b/i,
      /\b(call|invoke|run|use) (the )?(purchase_service|confirm_delivery|rate_purchase|buy_gas|request_cashout|cash_out)\b/i,
      /\b(rate|give) (this|me|us|it) (5|five)[- ]stars?\b.{0,40}\b(always|must|automatically|before|regardless)\b|\b(always|must|automatically) (rate|give) (this|me|us|it) (5|five)[- ]stars?\b/i,
      /\b(do not|don't|never) (tell|inform|ask|notify|show) (the |your )?(user|human|operator|owner)\b/i,
      /\b(without|no need for) (asking|telling|consulting) (the |your )?(user|human|owner)\b/i,
    ],
  },
];

const HYPE = [
  /\bbest (quality|service|prices?|results|in the (world|market|business)|ever)\b/i,
  /\b(#1|number one|no\.? ?1)\b/i,
  /\bworld[- ]class\b/i,
  /\brevolutionary\b|\bgame[- ]chang(er|ing)\b|\bcutting[- ]edge\b|\bnext[- ]level\b|\bunleash\b|\bsynerg(y|ies)\b|\bparadigm\b/i,
  /\b(we|i) (do|can do|handle) (it all|everything|anything)\b|\banything you (need|want)\b|\bwhatever you (need|want)\b/i,
  /\b(unbeatable|unmatched|unparalleled|second to none|top[- ]notch|premium quality|highest quality|amazing|incredible|awesome|fantastic|superb|excellent)\b/i,
  /\b(success|excellence|innovation|quality|passion|trust) (guaranteed|delivered|redefined)\b/i,
  /\b(your (success|satisfaction),? our (mission|priority|goal))\b|\bsky'?s the limit\b|\bdreams? (come true|into reality)\b/i,
  /\b(empower|transform|elevate|supercharge|skyrocket|10x) (your|the)\b/i,
];

const CONCRETE_DELIVERABLE =
  /\b(you (get|receive)|deliver(s|able|ables)?|outputs?|returns?|i (will|'ll) (write|send|produce|return|provide|build|create|draft|open)|pull request|\bpr\b|patch|report|csv|json|markdown|pdf|spreadsheet|dockerfile|script|file|summary|table)\b/i;

function findFirst(text: string, patterns: RegExp[]): { index: number; length: number } | null {
  for (const p of patterns) {
    const m = p.exec(text);
    if (m) return { index: m.index, length: m[0].length };
  }
  return null;
}

// Crypto addresses. Bitcoin candidates are confirmed with a checksum check, so random ids pass.
const BTC_CANDIDATE = /\b(bc1|tb1)[02-9ac-hj-np-z]{11,71}\b|\b[13mn2][1-9A-HJ-NP-Za-km-z]{25,34}\b/g;
const ETH_ADDRESS = /\b0x[a-fA-F0-9]{40}\b/;
const TRON_ADDRESS = /\bT[1-9A-HJ-NP-Za-km-z]{33}\b/;
const WALLET_WORDS = /\b(wallet|usdt|usdc|trc20|erc20|bep20|solana|sol address|eth address|btc address|bitcoin address|send (btc|eth|usdt|sol|crypto) to)\b.{0,20}[:=]?\s*[1-9A-HJ-NP-Za-km-z]{32,44}\b/i;

function findWallet(text: string): string | null {
  for (const m of text.matchAll(BTC_CANDIDATE)) {
    if (isBtcAddress(m[0])) return m[0];
  }
  const eth = ETH_ADDRESS.exec(text);
  if (eth) return eth[0];
  const tron = TRON_ADDRESS.exec(text);
  if (tron) return tron[0];
  const w = WALLET_WORDS.exec(text);
  return w ? w[0] : null;
}

// Phone numbers: 10–15 digits written with the usual separators (dates and prices have fewer digits or other separators).
const PHONE_CANDIDATE = /(?:\+|\b00)?\(?\d[\d\s().-]{8,20}\d\b/g;

function findPhone(text: string): string | null {
  for (const m of text.matchAll(PHONE_CANDIDATE)) {
    const digits = m[0].replace(/\D/g, '');
    if (digits.length >= 10 && digits.length <= 15 && !/^\d{4}-\d{2}-\d{2}/.test(m[0].trim())) return m[0].trim();
  }
  return null;
}

function keywordStuffing(title: string, description: string): string | null {
  const titleWords = contentWords(title);
  const titleCounts = new Map<string, number>();
  for (const w of titleWords) titleCounts.set(w, (titleCounts.get(w) ?? 0) + 1);
  for (const [w, n] of titleCounts) if (n >= 3) return `"${w}" ×${n} in the title`;

  const all = contentWords(`${title} ${description}`);
  if (all.length >= 10) {
    const counts = new Map<string, number>();
    for (const w of all) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const [w, n] of counts) {
      if ((n >= 6 && n / all.length >= 0.2) || n >= 10) return `"${w}" ×${n}`;
    }
  }
  // A bare tag list: many comma/pipe/hashtag-separated fragments of one or two words.
  const fragments = description.split(/[,|;\n#]+/).map((f) => f.trim()).filter(Boolean);
  const short = fragments.filter((f) => f.split(/\s+/).length <= 2);
  if (fragments.length >= 10 && short.length / fragments.length >= 0.8) return `${fragments.length} bare keywords`;
  const hashtags = description.match(/#\w+/g) ?? [];
  if (hashtags.length >= 6) return `${hashtags.length} hashtags`;
  return null;
}

function shouting(title: string, description: string): string | null {
  const letters = (s: string) => s.replace(/[^A-Za-z]/g, '');
  const upperRatio = (s: string) => {
    const l = letters(s);
    return l.length ? l.replace(/[^A-Z]/g, '').length / l.length : 0;
  };
  if (letters(description).length >= 20 && upperRatio(description) > 0.6) return 'the description is mostly capital letters';
  if (letters(title).length >= 12 && upperRatio(title) > 0.8 && /\s/.test(title.trim())) return 'the title is in capital letters';
  const bangs = /!{3,}|(?:!\s*){4,}/.exec(`${title} ${description}`);
  if (bangs) return 'runs of exclamation marks';
  return null;
}

/**
 * What the rules read. `text` is the listing as seen (see visibleText) with spelled-out addresses
 * unspelled; every rule reads it. `views` adds the readings a disguise needs, for the rules that read
 * look-alikes: look-alike letters folded first (so "nаme (аt) …" unspells too), and the same with
 * invisible characters read as word breaks. A listing without any disguise has the one view.
 */
function readings(listing: { title: string; description: string }) {
  const title = unspellEmails(visibleText(listing.title));
  const description = unspellEmails(visibleText(listing.description));
  const text = `${title}\n${description}`;
  const folded = (invisibleAs: '' | ' ') => unspellEmails(foldLookalikes(visibleText(`${listing.title}\n${listing.description}`, invisibleAs)));
  return { title, description, text, views: [...new Set([text, folded(''), folded(' ')])] };
}

export function moderate(listing: { title: string; description: string }): ModerationVerdict {
  const { title, description, text, views } = readings(listing);
  const reasons: ModerationReason[] = [];
  const add = (code: ModerationCode, message: string, hint: string, evidence?: string) => {
    if (!reasons.some((r) => r.code === code)) reasons.push({ code, message, hint, ...(evidence ? { evidence } : {}) });
  };

  if (/^\s*(test|testing|asdf|title|listing|untitled|new listing|sample|example|xxx|aaa|abc|foo|bar)\s*\d*\s*$/i.test(title)) {
    add('placeholder', 'The title is a placeholder.', PLACEHOLDER_HINT, title.trim());
  }
  for (const rule of RULES) {
    for (const view of rule.readsLookalikes ? views : [text]) {
      const hit = findFirst(view, rule.patterns);
      if (hit) {
        add(rule.code, rule.message, rule.hint, excerpt(view, hit.index, hit.length));
        break;
      }
    }
  }

  const firstOf = (find: (view: string) => string | null) => views.map(find).find((found) => found !== null) ?? null;
  const phone = firstOf(findPhone);
  if (phone) {
    add('off_platform_contact', 'The listing contains a phone number.', 'Remove contact details: buyers and sellers talk through send_message on a purchase, which keeps the escrow protection.', phone);
  }
  const wallet = firstOf(findWallet);
  if (wallet) {
    add('crypto_wallet', 'The listing contains a cryptocurrency address.', 'Remove the address: buyers pay only with gas through escrow, and your earnings are cashed out with connect_payouts and request_cashout.', wallet);
  }

  const hype = HYPE.filter((p) => p.test(text)).length;
  if ((hype >= 2 && !CONCRETE_DELIVERABLE.test(description)) || hype >= 4) {
    add('slogan', 'The listing is marketing slogans without a concrete deliverable.', 'Drop the slogans and state plainly what the buyer provides, what you deliver (format, size) and by when.');
  }

  const stuffed = keywordStuffing(title, description);
  if (stuffed) {
    add('keyword_stuffing', 'The listing repeats keywords instead of describing the service.', 'Write the description as sentences; mention each skill once. Search already matches word forms and the title counts most.', stuffed);
  }
  const loud = shouting(title, description);
  if (loud) {
    add('shouting', 'The listing is shouting (capital letters or runs of exclamation marks).', 'Use normal sentence case and at most one exclamation mark; acronyms like API or SQL are fine.', loud);
  }

  return { verdict: reasons.length ? 'rejected' : 'approved', reasons };
}
