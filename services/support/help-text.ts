/**
 * ask_help's query understanding: the same normalisation for the indexed sections and the questions
 * (phrases, question intents, stop words, synonyms weighted below the agent's own words, a light
 * stemmer). help.ts indexes and answers with it.
 */

/**
 * Phrases agents use → the words the documentation uses. Applied to questions and sections alike,
 * so a phrase rewritten here always meets its rewritten form in the docs. Intents ("how long
 * until…", "what happens to my gas when I buy…") map to the concept that answers them.
 */
const PHRASES: Array<[RegExp, string]> = [
  [/\bcash[\s-]?outs?\b/g, ' cashout '],
  [/\bpaid out\b/g, ' cashout '],
  [/\bpay[\s-]?outs?\b/g, ' payout '],
  [/\b(?:money|payment|gas|funds|credits|cash)\s+back\b/g, ' refund '],
  [/\b(?:get|take|pull|move|withdraw)\s+(?:my\s+|the\s+|our\s+)?(?:money|gas|earnings|funds|profits?|cash)\s+out\b|\bmoney out\b/g, ' cashout '],
  [/\b(?:ran|run|running|runs)\s+out\s+of\s+(?:gas|credits?|funds|money|balance)\b|\bout of (?:credits?|funds|money)\b/g, ' insufficient gas '],
  [/\b(?:send|turn|hand)\s+in\b/g, ' deliver '],
  [/\b(?:put|post|place)\s+up\s+(?:an?\s+)?(?:ad|advert|offer|listing)\b|\b(?:post|place|run)\s+an?\s+(?:ad|advert)\b/g, ' list_service listing '],
  [/\btop[\s-]?up\b/g, ' buy gas '],
  [/\b(?:put|offer|sell|list)\s+(?:\S+\s+){0,4}?(?:up\s+)?for\s+sale\b|\bput\s+(?:\S+\s+){0,4}?up\s+for\s+(?:sale|hire)\b/g, ' list_service sell '],
  [/\bcode[\s-]reviews?\b/g, ' codereview '],
  [/\bwhat\s+(?:the\s+)?seller\s+(?:sent|delivered|handed over)(?:\s+(?:me|us))?\b/g, ' get_delivery delivery '],
  [/\b(?:before|without)\s+(?:i\s+|we\s+)?(?:even\s+|first\s+)?(?:register(?:ing)?|signing up|an?\s+(?:api\s*)?key|an account)\b/g, ' no key needed '],
  [/\b(?:add|deposit|load|put)(?:s|ing|ed)?\s+(?:more\s+|some\s+)?(?:funds|money|gas|credits?|balance)\b/g, ' buy gas '],
  [/\b(?:look|scroll|go|page)\s+through\s+(?:the\s+)?(?:offers?|listings?|services?|what)\b|\bwhat\s+(?:\w+\s+)?(?:sellers|agents|others|people)\s+(?:offer|sell|list)\b|\bthe offers\b/g, ' browse search '],
  [/\bapi[\s-]?keys?\b/g, ' apikey '],
  [/\b(?:sign|log)[\s-]?(?:up|in)\b/g, ' register '],
  [/\b(?:create|open|make|set up|get)\s+(?:an?\s+|my\s+)?(?:new\s+)?account\b/g, ' register '],
  [/\bmodel context protocol\b/g, ' mcp '],
  [/\b(?:vs\s?code|visual studio code|windsurf|claude (?:desktop|code)|cline|continue\.dev)\b/g, ' mcp ide '],
  [/\bhook (?:\w+ )?up\b/g, ' connect mcp '],
  [/\bidempotency[\s-]?keys?\b/g, ' idempotency '],
  [/\bauto[\s-]?release[sd]?\b/g, ' autorelease '],
  [/\bauto[\s-]?refund(?:s|ed)?\b/g, ' autorefund '],
  [/\bquality[\s-]?(?:gate|check|review|bar|filter)\b/g, ' quality gate '],
  [/\bx-request-id\b/g, ' requestid '],
  [/\brequest[\s-]?id\b/g, ' requestid '],
  [/\bnot enough\b/g, ' insufficient '],
  [/\bout of gas\b/g, ' insufficient gas '],
  [/\b(?:never|not|didn'?t|did not|hasn'?t|has not|haven'?t|have not|still hasn'?t|still has not)\s+(?:been\s+|yet\s+)?(?:deliver(?:ed|s)?|sent|shipped|handed (?:over|in)|finished|shows? up|showed up|arrived|arrives|came|comes)\b/g, ' undelivered refund dispute '],
  [/\b(?:do not|don'?t|never|not|forget to|forgot to|fail to|failed to|doesn'?t|does not|didn'?t)\s+(?:yet\s+)?(?:clicked\s+|pressed\s+|hit\s+|click\s+|press\s+)?confirm(?:ed|s)?\b/g, ' autorelease confirm '],
  [/\b(?:is there a catch|any catch|hidden (?:fees?|costs?|charges?))\b/g, ' fee fees '],
  [/\b(?:never|not|hasn'?t|didn'?t)\s+(?:been\s+)?confirmed\b/g, ' autorelease confirm '],
  [/\b(?:what|how much)\s+(?:price\s+)?(?:should|to|do|can|could)\s+(?:i\s+)?(?:charge|ask)\b/g, ' pricing price '],
  [/\bhow long\b/g, ' days '],
  [/\b(?:exchange|conversion) rate\b/g, ' usd peg '],
  [/\breal money\b/g, ' usd cashout '],
  [/\bhand(?:ed)? (?:over|in)\b/g, ' deliver '],
  [/\bcode generation\b/g, ' codegen '],
  [/\bstar rating\b/g, ' rating '],
  [/\bprice range\b/g, ' minPriceGas maxPriceGas price '],
  [/\b(?:lowest|minimum|min|smallest)\s+price\s+(?:i|we|you|a seller|sellers)\s+(?:can|may|could|am allowed to|are allowed to)\s+(?:set|charge|ask|list)\b/g, ' minimum listing price '],
  [/\bnothing\s+(?:was|has been|got|is|came)\s+(?:\w+\s+)?(?:delivered|sent|shipped)\b/g, ' undelivered refund dispute '],
  [/\b(?:cheapest|lowest price|least expensive)\b/g, ' price_asc sort '],
  [/\b(?:most expensive|highest price|priciest)\b/g, ' price_desc sort '],
  [/\bstatus code\b/g, ' status '],
  [/\b(?:cloud|hosting|internet|email|e-mail|dns|vpn|llm|ai|model|identity|oauth|sms)\s+providers?\b/g, ' thirdpartyvendor '],
  [/(?<=\b(?:listings?|services?|offers?|results?)\s+(?:\w+\s+){0,2})(?:under|below|less than|cheaper than|at most|up to)\s+\d+(?:\s*gas)?\b/g, ' maxPriceGas price filter '],
  [/(?<=\b(?:listings?|services?|offers?|results?)\s+(?:\w+\s+){0,2})(?:over|above|more than|at least)\s+\d+(?:\s*gas)?\b/g, ' minPriceGas price filter '],
  [/\b(?:max(?:imum)?|min(?:imum)?|longest|shortest)\s+(?:number of\s+)?(?:delivery\s+)?days\b/g, ' deliveryDays days '],
];

/**
 * Question intents ("how long until…", "what happens to my gas when I buy…", "take my listing
 * offline") → the concept that answers them. Applied to questions only, and added to the agent's
 * words rather than replacing them.
 */
const INTENTS: Array<[RegExp, string]> = [
  [/\bhappens? to (?:my |the )?(?:gas|money|funds|credits?|balance|payment)\b/g, '$& escrow held '],
  [/\bwhere (?:does|do|is|are|'s) (?:my |the )?(?:gas|money|funds|credits?|payment)(?: go| goes| kept| held| stored| sitting)?\s*(?:\?|$|until|while|before|after|when|during)/g, '$& escrow held '],
  [/\b(?:someone|somebody|anyone|a buyer|who)\s+(?:bought|purchased|ordered)\b|\bnew orders?\b|\bmy sales\b/g, '$& list_orders seller orders '],
  [/\b(?:my|own|our) (?:agent )?id\b|\bwho am i\b/g, '$& whoami '],
  [/\b(?:purchase|order|sales?|buying) history\b|\b(?:all )?my (?:purchases|orders|sales)\b|\b(?:status|state) of my (?:order|purchase)\b/g, '$& list_orders get_purchase '],
  [/\bchange[sd]? (?:my|your|their) mind\b/g, '$& refund cancel '],
  [/\bhow much (?:do|will|would|can|does) (?:i|we|the seller|a seller|sellers?) (?:earn|get|make|receive|keep|net)\b/g, '$& fee seller nets '],
  [/\b(?:become|be|start as|register as|work as|sign up as|join as) an? (?:seller|provider|vendor|freelancer|merchant|supplier|contractor)\b|\bstart selling\b/g, '$& selling list_service '],
  [/\bwhen (?:i|you|we|an agent|a buyer) (?:buy|purchase|order|pay for)\b/g, '$& purchase escrow '],
  [/\b(?:charge|charges|take|takes|keep|keeps|cost|costs)\s+(?:per|for each|on each|for every|on every|from each|from every)\s+(?:transaction|sale|order|purchase|deal|job)\b|\bhow much do (?:you|they) (?:charge|take|keep)\b/g, '$& fee platform percent '],
  [/\b(?:nobody|no one|noone|no-one)\s+(?:has\s+|have\s+)?(?:bought|buys|purchased|ordered)\b|\bget (?:noticed|found|more (?:sales|buyers|orders|customers))\b|\b(?:more|increase|boost|improve)\s+(?:my\s+)?(?:sales|visibility|ranking|buyers|customers)\b/g, '$& quality score ranking reputation '],
  [/\b(?:updates?|events?|news|changes)\s+(?:\w+\s+){0,2}automatic\w*\b|\bautomatic\w*\s+(?:\w+\s+){0,2}(?:updates?|notifi\w+|alerts?)\b|\breal[\s-]?time\b|\bpush (?:notifications?|updates?|events?)\b/g, '$& webhook set_webhook '],
  [/\b(?:an?|the|your|this)\s+(?:http\s+|https\s+|rest\s+|json\s+)?api\s+(?:\w+\s+){0,2}(?:call|use|hit)\b|\bcall (?:your|the|this) api\b/g, '$& router tool endpoint '],
  [/\b(?:thank|reward|praise|recommend)\w*\s+(?:a |the |my |this )?(?:seller|provider|vendor|agent)\b/g, '$& rate_purchase rating '],
  [/\b(?:get|gets|getting|be|is|are|am)\s+paid\b(?!\s+(?:in|with|via|as|to)\s+(?:crypto|bitcoin|btc))|\bget (?:my |the |their )?money\b(?! back| out)|\breceiv\w*\s+(?:their |my |the |his |her )?(?:payment|money|earnings)\b/g, '$& paid confirm autorelease '],
  [/\b(?:what|which) (?:now|next)\b|\bwhat do i do (?:now|next)\b|\bnext steps?\b/g, '$& next steps '],
  [/\b(?:charged|pay|paying|buy|bought|billed) twice\b|\bdouble[\s-]?(?:charged?|purchase|spend)\b/g, '$& idempotency retry '],
  [/\b(?:timed|times) out\b|\btime[\s-]?out\b/g, '$& timeout retry '],
  [/\b(?:have|has|is) left\b/g, '$& balance '],
  [/\b(?:start|started|begin|began|begun)\s+(?:working|work)\b/g, '$& ack_purchase acknowledge '],
  [/\b(?:take|taking|took)\s+(?:\w+\s+){0,3}(?:offline|down)\b/g, '$& paused pause '],
  [/\b(?:find|hire|looking for|look for|need|get|want)\s+(?:someone|somebody|an agent|a seller|a service|help)\b/g, '$& search_services search buy '],
  [/\b(?:see|read|view|get|download|open|fetch|check|inspect|verify)\s+(?:what|the|their|if the|whether the)\s+(?:\w+\s+){0,3}(?:delivered|handed over|submitted|delivery|deliverable|work|result|results|output|files?)\b/g, '$& get_delivery read delivery '],
  [/\b(?:maximum|max|highest|upper limit|cap on the)\s+(?:price|amount|spend)\b|\b(?:pay|spend|charged?) more than\b/g, '$& maxPriceGas '],
  [/\bpaid (?:at|on|via|with|through|by) (?:the )?(?:checkout|card|stripe|credit card)\b/g, '$& buy gas checkout '],
  [/\bbalance (?:did ?n'?t|does ?n'?t|has ?n'?t|is not|not|never|is still|still)\b/g, '$& poll wallet gasbalance risen '],
  [/\b(?:without|instead of|rather than|avoid|stop|no more|not)\s+(?:having to\s+|constantly\s+|always\s+|keep\s+)?(?:poll|polling|checking|asking)\b/g, '$& webhook set_webhook '],
  [/\b(?:stop|hide|remove|unlist|delist|pause|deactivate|disable|withdraw|delete|close|end|archive|cancel|kill)\s+(?:\w+\s+){0,2}(?:listings?|offers?|services?)\b|\b(?:showing up|show up|appearing|appear|visible|listed)\s+in\s+(?:the\s+)?(?:search|results|catalogue|catalog)\b/g, '$& update_service paused '],
  [/\b(?:who|which \w+)\s+(?:\w+\s+){0,2}(?:decides?|judges?|settles?|resolves?|arbitrates?|rules? on)\b|\b(?:who|which \w+)\s+(?:\w+\s+){0,2}(?:reviews?|handles?|looks? (?:at|into))\s+(?:\w+\s+){0,2}disput\w*\b|\b(?:decides?|decided|judges?|judged)\s+(?:a |the |my |on )?disputes?\b/g, '$& dispute operator resolves '],
  [/\b(?:deadline|due date|delivery date)\s+(?:has\s+|is\s+|was\s+)?(?:passed|missed|expired|over|gone)\b|\b(?:missed|past|passed)\s+(?:the\s+|its\s+|their\s+)?deadline\b/g, '$& undelivered refund autorefund '],
  [/\b(?:not|n'?t|never)\s+(?:match(?:es|ed)?|what (?:was|i|we|they) (?:advertised|described|promised|asked for|ordered|paid for)|as (?:described|advertised|promised))\b|\b(?:misleading|misrepresented|false advertising)\b/g, '$& misrepresentation dispute refund '],
  [/\b(?:call|calls|ping|pings|post to|posts to|hit|hits|notify)\s+(?:my|our|an?|your)\s+(?:own\s+)?(?:endpoint|url|server|api|http|https)\b/g, '$& webhook set_webhook '],
  [/\b(?:get|be|being|got)\s+told\b|\bhear (?:about|of)\b|\bkeep (?:me|us) (?:posted|updated|informed)\b/g, '$& webhook set_webhook notify '],
  [/\bhow many\s+days\b/g, '$& deliveryDays '],
  [/\bask\s+(?:the\s+|a\s+|my\s+|this\s+)?(?:seller|buyer|provider)\b/g, '$& send_message message '],
  [/\bpay\s+(?:a|the|my|this)\s+(?:seller|provider|agent)\b/g, '$& purchase_service confirm_delivery escrow '],
  [/\b(?:switch|turn|shut|toggle)\w*\s+(?:\w+\s+){0,3}off\b/g, '$& update_service paused '],
  [/\b(?:paid|payout|pay me|cash ?out|withdraw\w*)\s+(?:in|with|as|via|to)\s+(?:crypto\w*|bitcoin|btc)\b/g, '$& cashout connect_payouts btc '],
  [/\bwhen(?:ever)?\s+(?:something|anything|things?|stuff)\s+(?:happens?|changes?)\b|\bwhen\s+(?:an?\s+)?(?:event|order|sale|purchase|delivery)\s+(?:happens|arrives|comes in|is made|is placed)\b/g, '$& webhook set_webhook '],
  [/\b(?:what|which)\s+(?:\w+\s+)?tools\b|\b(?:list|all)\s+(?:of\s+)?(?:the\s+)?tools\b/g, '$& every tool lists schema '],
  [/\b(?:other|the other)\s+(?:side|party|end)\b|\bcounter[\s-]?party\b/g, '$& buyer seller message '],
  [/\b(?:raise|change|increase|lower|update|edit)\s+(?:my\s+|the\s+)?price\b(?:\s+\w+){0,6}\s+(?:after|once|when|while)\b/g, '$& price fixed purchase time '],
  [/\bpay\s+(?:\w+\s+){0,2}(?:to\s+)?(?:be\s+)?(?:list|listed|listing|sell|selling|publish|post)\b/g, '$& listing fee free '],
  [/\b(?:tell|let|inform|notify|show)\s+(?:the\s+|a\s+|my\s+)?buyer\s+(?:know\s+)?(?:\w+\s+){0,3}(?:got|received|saw|seen|accepted|working|started|on it)\b/g, '$& ack_purchase acknowledge '],
  [/\bhow (?:big|large|long)\s+(?:can|may|should|is)\s+(?:a |the |my )?(?:delivery|deliverable|upload|file)\b|\b(?:size|max(?:imum)? size)\s+(?:limit\s+)?(?:of|for)\s+(?:a |the )?(?:delivery|deliverable)\b/g, '$& delivery kb links '],
  [/\b(?:sandbox|test mode|testing payments?|fake payments?|without (?:a )?(?:real )?card)\b/g, '$& sandbox checkout '],
  [/\b(?:wallet|balance|account)\s+(?:is\s+)?(?:empty|at zero|zero|0)\b|\b(?:no|zero) (?:gas|credits|funds|money|balance)\s*(?:left|$|,|\.|\?)|\bbroke\b/g, '$& insufficient gas buy_gas '],
  [/\b(?:how long|how fast|how quickly|how soon|when)\b(?:\s+\w+){0,3}\s+refunds?\b|\brefunds?\s+(?:\w+\s+){0,2}take\b/g, '$& refunded at once '],
  [/\bbuyers?\s+(?:\w+\s+){0,2}(?:disappeared|vanished|ghosted|went silent|is silent|gone|not responding|never (?:confirmed|answered|replied))\b/g, '$& autorelease confirm paid '],
  [/\b(?:put|place|post|get|bring)\s+(?:\w+\s+){0,3}(?:on|onto|in|into|to)\s+(?:the\s+)?(?:market|marketplace|store|catalogue|catalog|platform)\b/g, '$& list_service selling '],
  [/\b(?:human|owner|operator|boss|user)\s+(?:\w+\s+){0,2}(?:stop|block|prevent|forbid|restrict|limit|cap|control|keep)\w*\s+(?:me|us|my agent|the agent)\b/g, '$& spending limits allowed categories '],
  [/\bturn\s+(?:\w+\s+){0,3}(?:back\s+)?on\b|\b(?:re-?activate|re-?enable|unpause|resume|relist|re-?list)\b/g, '$& update_service active paused '],
  [/\b(?:transfer|move|send|convert|get|turn|change|exchange|swap)\s+(?:\w+\s+){0,3}(?:to|into|onto|for)\s+(?:my\s+|a\s+)?(?:bitcoin|btc|crypto|wallet|bank|address)\b/g, '$& cashout request_cashout '],
  [/\b(?:btc|bitcoin|crypto|payout)\s+(?:wallet|address)\b/g, '$& connect_payouts btcAddress payout '],
  [/\bpay (?:with|by|using|in|via|through) (?:crypto\w*|bitcoin|btc|(?:a |my )?(?:credit |debit )?card|paypal|bank|cash|usd|dollars|euros?)\b|\bpayment (?:methods?|options?)\b|\bhow (?:can|do|could) (?:i|we) pay\b|\b(?:accept|take|support)\s+(?:\w+\s+)?(?:cards?|payments?|paypal|crypto)\b/g, '$& card checkout buy_gas '],
  [/\borders?\s+(?:\w+\s+){0,2}(?:with|from|for|to)\s+me\b|\b(?:incoming|received)\s+orders?\b/g, '$& list_orders seller '],
  [/\b(?:has ?n'?t|has not|have not|not|never|didn'?t|did not)\s+(?:yet\s+|even\s+)?(?:started|begun|begin|start|acknowledged)\b/g, '$& ack_purchase send_message message '],
  [/\bapprov\w*\s+(?:my|the|his|her|their|our)\s+(?:work|delivery|deliverable|result|job|submission)\b/g, '$& confirm_delivery confirm autorelease '],
  [/\bin[\s-]progress\b|\bmark\w*\s+(?:\w+\s+){0,3}(?:as\s+)?(?:started|accepted|acknowledged|begun)\b/g, '$& ack_purchase acknowledge '],
  [/\bnot\s+(?:answering|responding|replying)\b|\b(?:no|never (?:got|get|had) (?:an?\s+)?)\s*(?:answer|response|reply)\b/g, '$& unresponsive undelivered refund '],
  [/\bwithdrawable\b(?:\s+\w+){0,4}\s+(?:zero|0|nothing|empty|low|less)\b|\bcan'?t (?:cash ?out|withdraw)\b/g, '$& withdrawable sale_earn completed '],
];

const STOP_WORDS = new Set(
  (
    'a an the i im i\'m my me mine we our us you your yours it its this that these those there their they them ' +
    'do does did done doing how what whats why when where which who whom whose is are was were be been being am ' +
    'to of in on for and or but nor so if then than too very can could should would will shall may might must ' +
    'with without from at by as into onto about over under again also just only any some all each every ' +
    'get gets got getting have has had having make makes made want wants need needs please thanks thank hi hello ' +
    'tell explain know let lets here now still ok okay yet one way thing things else mean means meaning happen happens ' +
    'going like current currently last year really actually something someone anything possible supposed able ' +
    'use using used out see look whether later soon anyone anybody somebody maybe much many check left ' +
    'become becoming goes go going options option choices two work works working stopped ' +
    'difference different differ between versus vs compare compared again exist exists existing available badly well ' +
    'while whilst during meanwhile certain pls plz ' +
    'didn doesn don isn wasn hasn haven won can cannot aren weren wouldn shouldn couldn'
  ).split(/\s+/),
);

/** Question words → words the documentation uses. Stems are applied afterwards. */
const SYNONYMS: Record<string, string[]> = {
  withdraw: ['cashout'],
  withdrawal: ['cashout'],
  withdrawing: ['cashout'],
  payout: ['cashout'],
  bitcoin: ['btc', 'cashout'],
  btc: ['cashout'],
  earnings: ['cashout', 'sale_earn'],
  credit: ['gas'],
  credits: ['gas'],
  token: ['gas'],
  tokens: ['gas'],
  funds: ['gas'],
  fund: ['gas', 'buy_gas'],
  broke: ['insufficient', 'buy_gas'],
  mistake: ['refund', 'cancel'],
  accidentally: ['refund', 'cancel'],
  identifier: ['id', 'whoami'],
  hunt: ['search', 'search_services'],
  locate: ['search', 'search_services'],
  ping: ['webhook'],
  pinged: ['webhook'],
  email: ['webhook'],
  coins: ['gas'],
  money: ['gas'],
  balance: ['gas', 'wallet'],
  cost: ['fee'],
  costs: ['fee'],
  charge: ['fee', 'pricing'],
  commission: ['fee'],
  cut: ['fee'],
  percent: ['fee'],
  percentage: ['fee'],
  reject: ['rejected', 'listing_rejected'],
  rejected: ['listing_rejected'],
  rejection: ['listing_rejected'],
  refused: ['rejected'],
  denied: ['rejected'],
  review: ['rating'],
  reviews: ['rating'],
  stars: ['rating'],
  invite: ['referral'],
  affiliate: ['referral'],
  referred: ['referral'],
  trustworthy: ['trust', 'reputation'],
  reliable: ['trust', 'reputation'],
  safe: ['trust', 'reputation', 'escrow'],
  protected: ['escrow', 'trust'],
  protection: ['escrow', 'trust'],
  scam: ['trust', 'dispute'],
  scammed: ['dispute', 'misrepresentation'],
  legit: ['trust', 'reputation'],
  held: ['escrow', 'hold'],
  locked: ['escrow', 'hold'],
  frozen: ['escrow', 'dispute'],
  chat: ['message'],
  contact: ['message'],
  cancel: ['refund'],
  complaint: ['dispute'],
  complain: ['dispute'],
  install: ['mcp', 'setup'],
  configure: ['mcp', 'config'],
  ide: ['mcp'],
  claude: ['mcp'],
  cursor: ['mcp'],
  stdio: ['mcp'],
  key: ['apikey'],
  apikey: ['apikey', 'auth'],
  lost: ['apikey'],
  '401': ['unauthorized'],
  '402': ['insufficient_gas'],
  '403': ['forbidden'],
  '404': ['not_found'],
  '409': ['invalid_state'],
  '422': ['listing_rejected'],
  '429': ['rate_limited'],
  '500': ['internal'],
  '501': ['not_implemented'],
  '503': ['service_unavailable'],
  retry: ['idempotency'],
  duplicate: ['idempotency'],
  twice: ['idempotency'],
  price: ['pricing'],
  insufficient: ['insufficient_gas'],
  paid: ['confirm', 'autorelease'],
  status: ['state'],
  states: ['state'],
  lifecycle: ['state'],
  stuck: ['state'],
  sell: ['selling', 'list_service'],
  selling: ['list_service'],
  task: ['service'],
  deadline: ['days'],
  undelivered: ['deliver', 'refund'],
  dollar: ['usd'],
  dollars: ['usd'],
  worth: ['usd', 'peg'],
  exchange: ['usd', 'peg'],
  // the platform's cut
  take: ['fee'],
  takes: ['fee'],
  keep: ['fee'],
  keeps: ['fee'],
  deducted: ['fee'],
  deduct: ['fee'],
  surcharge: ['fee'],
  margin: ['fee'],
  revenue: ['sale_earn', 'earnings'],
  income: ['sale_earn', 'earnings'],
  profit: ['sale_earn', 'earnings'],
  proceeds: ['sale_earn', 'earnings'],
  earned: ['sale_earn', 'earnings'],
  smallest: ['minimum'],
  least: ['minimum'],
  lowest: ['minimum'],
  min: ['minimum'],
  length: ['characters', 'words'],
  chars: ['characters'],
  bundle: ['pack'],
  bundles: ['pack'],
  package: ['pack'],
  packages: ['pack'],
  deposit: ['buy', 'gas'],
  recharge: ['buy', 'gas'],
  refill: ['buy', 'gas'],
  card: ['checkout', 'human'],
  pay: ['buy', 'checkout'],
  // buying
  filter: ['search', 'filters'],
  narrow: ['search', 'filters'],
  cheapest: ['price_asc'],
  sort: ['sort', 'search'],
  offers: ['listing', 'search'],
  orders: ['list_orders', 'purchase'],
  ordered: ['list_orders', 'purchase'],
  bought: ['purchase'],
  accept: ['confirm'],
  approve: ['confirm', 'checkout'],
  release: ['confirm', 'autorelease'],
  handed: ['deliver'],
  received: ['deliver'],
  maximum: ['maxPriceGas'],
  ceiling: ['maxPriceGas'],
  // after the purchase
  unhappy: ['refund', 'dispute'],
  dissatisfied: ['refund', 'dispute'],
  unsatisfied: ['refund', 'dispute'],
  poor: ['refund', 'dispute'],
  wrong: ['refund', 'dispute'],
  cheated: ['dispute', 'misrepresentation'],
  fraud: ['dispute', 'misrepresentation'],
  case: ['dispute'],
  claim: ['dispute'],
  arbitration: ['dispute', 'operator'],
  reply: ['message'],
  replies: ['message', 'list_messages'],
  respond: ['message'],
  // selling
  offer: ['list_service', 'listing'],
  publish: ['list_service', 'listing'],
  advertise: ['list_service', 'listing'],
  skills: ['list_service'],
  offline: ['paused'],
  temporarily: ['paused'],
  hide: ['paused'],
  disable: ['paused'],
  deactivate: ['paused'],
  pause: ['paused'],
  ship: ['deliver'],
  submit: ['deliver'],
  upload: ['deliver'],
  finished: ['deliver'],
  job: ['service'],
  gig: ['service'],
  // account and setup
  credentials: ['apikey'],
  password: ['apikey'],
  secret: ['apikey'],
  misplaced: ['lost', 'apikey'],
  forgot: ['lost'],
  recover: ['lost', 'apikey'],
  recovered: ['lost', 'apikey'],
  account: ['register', 'whoami'],
  identity: ['whoami'],
  profile: ['whoami'],
  belongs: ['whoami'],
  desktop: ['mcp'],
  integrate: ['mcp'],
  plugin: ['mcp'],
  reward: ['referral', 'bonus'],
  rewards: ['referral', 'bonus'],
  defect: ['bug', 'report_bug'],
  glitch: ['bug', 'report_bug'],
  broken: ['bug', 'report_bug'],
  feedback: ['report_experience'],
  went: ['report_experience'],
  house: ['platform', 'fee'],
  convert: ['usd', 'cashout'],
  ghost: ['undelivered', 'refund'],
  ghosts: ['undelivered', 'refund'],
  ghosted: ['undelivered', 'refund'],
  disappears: ['undelivered', 'refund'],
  disappeared: ['undelivered', 'refund'],
  vanished: ['undelivered', 'refund'],
  unresponsive: ['undelivered', 'refund', 'message'],
  silent: ['undelivered', 'refund', 'message'],
  garbage: ['refund', 'dispute'],
  junk: ['refund', 'dispute'],
  useless: ['refund', 'dispute'],
  bad: ['refund', 'dispute'],
  terrible: ['refund', 'dispute'],
  incomplete: ['refund', 'dispute'],
  revoked: ['unauthorized', 'apikey'],
  expired: ['unauthorized', 'apikey'],
  invalid: ['unauthorized', 'invalid_arguments'],
  stale: ['unauthorized', 'apikey'],
  myself: ['own'],
  yourself: ['own'],
  week: ['days'],
  weekly: ['days'],
  problem: ['bug', 'report_bug'],
  problems: ['bug', 'report_bug'],
  issue: ['bug', 'report_bug'],
  fast: ['days'],
  quickly: ['days'],
  quick: ['days'],
  link: ['checkoutUrl', 'url'],
  url: ['checkoutUrl'],
  closed: ['lost'],
  tab: ['page', 'checkout'],
  browser: ['page', 'human'],
  bring: ['referral', 'invite'],
  bringing: ['referral', 'invite'],
  recruit: ['referral', 'invite'],
  edit: ['update_service', 'change'],
  modify: ['update_service', 'change'],
  rename: ['update_service', 'change'],
  arrive: ['delivered', 'poll', 'get_purchase'],
  arrives: ['delivered', 'poll', 'get_purchase'],
  arrived: ['delivered', 'poll', 'get_purchase'],
  notified: ['webhook', 'set_webhook'],
  notification: ['webhook', 'set_webhook'],
  notify: ['webhook', 'set_webhook'],
  notifications: ['webhook', 'set_webhook'],
  alert: ['webhook'],
  alerts: ['webhook'],
  alerted: ['webhook'],
  callback: ['webhook'],
  callbacks: ['webhook'],
  biggest: ['largest'],
  bigger: ['largest'],
  larger: ['largest'],
  rank: ['sort', 'relevance'],
  ranked: ['sort', 'relevance'],
  ranking: ['sort', 'relevance'],
  sorted: ['sort'],
  information: ['inputs', 'message'],
  info: ['inputs', 'message'],
  clarification: ['inputs', 'message'],
  clarify: ['inputs', 'message'],
  sold: ['sale', 'sale_earn'],
  fraction: ['fee', 'percent'],
  portion: ['fee', 'percent'],
  proportion: ['fee', 'percent'],
  browse: ['search', 'search_services'],
  explore: ['search', 'search_services'],
  discover: ['search', 'search_services'],
  catalogue: ['search', 'listings'],
  catalog: ['search', 'listings'],
  restrict: ['limit', 'allowed'],
  restricted: ['limit', 'allowed'],
  restriction: ['limit', 'allowed'],
  restrictions: ['limit', 'allowed'],
  endpoint: ['webhook', 'url'],
  escalate: ['dispute', 'dispute_purchase', 'operator'],
  escalation: ['dispute', 'dispute_purchase', 'operator'],
  conflict: ['dispute'],
  disagreement: ['dispute'],
  disagree: ['dispute', 'dispute_purchase'],
  peg: ['pegged', 'usd'],
  reach: ['contact', 'support'],
  friend: ['referral', 'invite'],
  friends: ['referral', 'invite'],
  colleague: ['referral', 'invite'],
  deal: ['purchase'],
  deals: ['purchase'],
  prove: ['sha256', 'delivery'],
  proof: ['sha256', 'delivery'],
  evidence: ['sha256', 'delivery'],
  customer: ['buyer'],
  customers: ['buyer'],
  client: ['buyer'],
  clients: ['buyer'],
  overspend: ['spending', 'limit', 'budget'],
  overspending: ['spending', 'limit', 'budget'],
  editor: ['mcp', 'ide'],
  editors: ['mcp', 'ide'],
  ad: ['listing', 'list_service'],
  ads: ['listing', 'list_service'],
  advert: ['listing', 'list_service'],
  authenticate: ['authorization', 'bearer', 'apikey'],
  authentication: ['authorization', 'bearer', 'apikey'],
  auth: ['authorization', 'bearer', 'apikey'],
  sign: ['signature', 'hmac'],
  signed: ['signature', 'hmac'],
  signing: ['signature', 'hmac'],
  payload: ['body', 'json'],
  payloads: ['body', 'json'],
  repo: ['repository'],
  expert: ['seller', 'search_services'],
  specialist: ['seller', 'search_services'],
  freelancer: ['seller', 'search_services'],
  consultant: ['seller', 'search_services'],
  provider: ['seller', 'search_services'],
  vendor: ['seller', 'search_services'],
  undo: ['refund', 'completed'],
  revert: ['refund', 'completed'],
  reverse: ['refund', 'completed'],
  reprice: ['price', 'update_service'],
  subscribe: ['webhook', 'set_webhook'],
  subscription: ['webhook', 'set_webhook'],
  listen: ['webhook', 'set_webhook'],
  listener: ['webhook', 'set_webhook'],
  expire: ['24', 'hours'],
  expires: ['24', 'hours'],
  expiry: ['24', 'hours'],
  expiration: ['24', 'hours'],
  pegged: ['usd'],
  paypal: ['payout', 'cashout'],
  bank: ['payout', 'cashout'],
  iban: ['payout', 'cashout'],
  wire: ['payout', 'cashout'],
  spec: ['openapi', 'llms'],
  specification: ['openapi', 'llms'],
  reference: ['openapi', 'docs'],
  docs: ['openapi', 'llms', 'docs'],
  documentation: ['openapi', 'llms', 'docs'],
  swagger: ['openapi'],
  describe: ['description'],
  accepted: ['quality', 'passScore'],
};

function normalise(text: string): string {
  let t = text.toLowerCase();
  for (const [re, rep] of PHRASES) t = t.replace(re, rep);
  return t;
}

/** Splits on anything but letters, digits and underscores; snake_case names also yield their parts. */
export function tokenize(text: string): string[] {
  const out: string[] = [];
  for (const raw of normalise(text).split(/[^\p{L}\p{N}_]+/u)) {
    const t = raw.replace(/^_+|_+$/g, '');
    if (!t) continue;
    out.push(t);
    if (t.includes('_')) for (const part of t.split('_')) if (part) out.push(part);
  }
  return out;
}

/** A light suffix stemmer: enough to meet "refunded"/"refunds", "delivery"/"delivered", "rejection"/"rejected". */
export function stem(word: string): string {
  let w = word;
  if (w.length <= 3 || w.includes('_') || /\d/.test(w)) return w;
  if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  if (w.endsWith('ing') && w.length > 5) w = w.slice(0, -3);
  else if (w.endsWith('ed') && w.length > 4) w = w.slice(0, -2);
  else if (w.endsWith('ion') && w.length > 6) w = w.slice(0, -3);
  if (w.endsWith('ery')) w = w.slice(0, -1);
  if (w.endsWith('e') && w.length >= 4) w = w.slice(0, -1);
  return w;
}

export function processTerm(term: string): string | null {
  const t = term.toLowerCase();
  if (STOP_WORDS.has(t)) return null;
  if (t.length < 2 && !/\d/.test(t)) return null;
  return stem(t);
}

/** The same synonyms found by a word's stem too ("profits" → profit, "subscribed" → subscribe). */
const SYNONYMS_BY_STEM = new Map<string, string[]>();
for (const [word, expansions] of Object.entries(SYNONYMS)) {
  const key = stem(word);
  SYNONYMS_BY_STEM.set(key, [...new Set([...(SYNONYMS_BY_STEM.get(key) ?? []), ...expansions])]);
}

/** Question terms: each original term with its expansions (processed), so coverage counts originals. */
export interface QuestionTerm {
  term: string;
  expansions: string[];
  /** A word naming what the agent wants to buy ("a Dockerfile expert"): the catalogue covers any topic. */
  topic?: true;
}

/** "find / hire / look for … an expert, a service, someone …": the words around it name a topic. */
const SEARCH_REQUEST =
  /\b(?:find|hire|look(?:ing)? for|search(?:ing)? for|need|want|buy|order|purchase)\s+(?:me\s+)?(?:an?\s+|some\s+|the\s+)?(?:[\w.+#-]+\s+){0,3}?(?:expert|specialist|freelancer|consultant|agent|seller|service|services|someone|somebody|developer|provider)\b/;

/**
 * isKnown: whether the documentation uses a (processed) term; a word it does not know is also looked
 * up by its stem in the synonyms, so "profits" finds what "profit" means.
 */
export function questionTerms(text: string, isKnown: (term: string) => boolean = () => true): QuestionTerm[] {
  const seen = new Set<string>();
  const out: QuestionTerm[] = [];
  let question = text.toLowerCase();
  const searchRequest = SEARCH_REQUEST.test(question);
  for (const [re, rep] of INTENTS) question = question.replace(re, rep);
  for (const tok of tokenize(question)) {
    const term = processTerm(tok);
    if (!term || seen.has(term)) continue;
    seen.add(term);
    const expansions = (SYNONYMS[tok] ?? (isKnown(term) ? undefined : SYNONYMS_BY_STEM.get(term)) ?? []).flatMap((s) => tokenize(s)).map(processTerm).filter((x): x is string => !!x && x !== term);
    const unique = [...new Set(expansions)];
    out.push({ term, expansions: unique, ...(searchRequest && !isKnown(term) && !unique.some(isKnown) ? { topic: true as const } : {}) });
  }
  return out;
}
