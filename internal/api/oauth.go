package api

// OAuth 2.0 grant types and token endpoint error codes (RFC 6749 §5.2, RFC 7009).
const (
	GrantAuthorizationCode = "authorization_code"
	GrantClientCredentials = "client_credentials"
	GrantRefreshToken      = "refresh_token"

	OAuthInvalidRequest       = "invalid_request"
	OAuthInvalidClient        = "invalid_client"
	OAuthInvalidGrant         = "invalid_grant"
	OAuthUnauthorizedClient   = "unauthorized_client"
	OAuthUnsupportedGrantType = "unsupported_grant_type"
	OAuthUnsupportedRespType  = "unsupported_response_type"
	OAuthAccessDenied         = "access_denied"
	OAuthServerError          = "server_error"
)

// Token is the token endpoint's response. Mapi is the partner's client id, a member the
// original service sent and partners read.
type Token struct {
	TokenType    string `json:"token_type"`
	Mapi         string `json:"mapi"`
	AccessToken  string `json:"access_token"`
	ExpiresIn    int64  `json:"expires_in"`
	RefreshToken string `json:"refresh_token,omitempty"`
}

// ServerMetadata is the authorization server's RFC 8414 metadata document.
type ServerMetadata struct {
	Issuer                            string   `json:"issuer"`
	AuthorizationEndpoint             string   `json:"authorization_endpoint"`
	TokenEndpoint                     string   `json:"token_endpoint"`
	RevocationEndpoint                string   `json:"revocation_endpoint"`
	ResponseTypesSupported            []string `json:"response_types_supported"`
	GrantTypesSupported               []string `json:"grant_types_supported"`
	CodeChallengeMethodsSupported     []string `json:"code_challenge_methods_supported"`
	TokenEndpointAuthMethodsSupported []string `json:"token_endpoint_auth_methods_supported"`
	RevocationEndpointAuthMethods     []string `json:"revocation_endpoint_auth_methods_supported"`
	ServiceDocumentation              string   `json:"service_documentation,omitempty"`
}
